import * as v from "valibot";
import type { Result } from "../../lib/result.js";
import { serviceId } from "../../store/names.js";
import { SCHEMA_VERSION, type ServiceRecord, ServiceRecordSchema } from "../../store/records.js";
import { translateService } from "./backends.js";
import { type KubeEndpointSlice, type KubeService, namespaceOf } from "./kube-objects.js";
import type { ExposureResult } from "./types.js";

export const HOSTS_ANNOTATION = "edgeslice.io/hosts";
export const PORT_ANNOTATION = "edgeslice.io/port";
export const PATH_PREFIX_ANNOTATION = "edgeslice.io/path-prefix";

/**
 * What one Service becomes in the store, from its `edgeslice.io/*` annotations and its slices.
 * Pure: the reconciler calls it on every event and writes only when the serialised record changed.
 */
export function exposeService(
  cluster: string,
  service: KubeService,
  slices: readonly KubeEndpointSlice[],
): ExposureResult {
  const exposure = exposeAnnotations(service);
  if (exposure.kind !== "exposed") return exposure;
  // The port exposeAnnotations chose (TCP, by name and number), now with the backends of the slices.
  const chosen = translateService(service, slices).find(
    ({ port }) =>
      port.protocol === "TCP" && port.number === exposure.port.number && port.name === exposure.port.name,
  );
  if (chosen === undefined) return invalid(PORT_ANNOTATION, "the chosen port left the Service");

  const record: ServiceRecord = {
    v: SCHEMA_VERSION,
    cluster,
    service: serviceId(namespaceOf(service), service.metadata.name),
    hosts: exposure.hosts,
    pathPrefix: exposure.pathPrefix,
    port: exposure.port,
    ipv4: chosen.ipv4,
    ipv6: chosen.ipv6,
  };
  // Last guard: whatever passes here is what routers will accept when they decode it.
  const checked = v.safeParse(ServiceRecordSchema, record);
  if (!checked.success) {
    const issue = checked.issues[0];
    const path = issue ? v.getDotPath(issue) : null;
    return { kind: "invalid", reason: `record does not validate: ${path ?? "(root)"}: ${issue?.message}` };
  }
  return { kind: "exposed", record };
}

/** Where a Service's `edgeslice.io/*` annotations expose it, read without its slices. */
export type AnnotationExposure =
  | {
      readonly kind: "exposed";
      readonly hosts: string[];
      readonly pathPrefix: string;
      readonly port: { readonly name: string; readonly number: number };
    }
  | { readonly kind: "not-exposed" }
  | { readonly kind: "invalid"; readonly reason: string };

/**
 * The annotations alone, by the rules of exposeService: hosts, path prefix and the chosen port (by
 * `edgeslice.io/port`, else the only port, else the one named http; TCP only). What the annotation route of
 * schema version 2 is made of; the backends are the Service record's, whatever routes reference it.
 */
export function exposeAnnotations(service: KubeService): AnnotationExposure {
  const annotations = service.metadata.annotations ?? {};
  const rawHosts = annotations[HOSTS_ANNOTATION];
  if (rawHosts === undefined) return { kind: "not-exposed" };
  const hosts = parseHosts(rawHosts);
  if (!hosts.ok) return invalid(HOSTS_ANNOTATION, hosts.error);
  const pathPrefix = parsePathPrefix(annotations[PATH_PREFIX_ANNOTATION]);
  if (!pathPrefix.ok) return invalid(PATH_PREFIX_ANNOTATION, pathPrefix.error);
  const chosen = choosePort(translateService(service, []), annotations[PORT_ANNOTATION]);
  if (!chosen.ok) return invalid(PORT_ANNOTATION, chosen.error);
  const { name, number } = chosen.value.port;
  return { kind: "exposed", hosts: hosts.value, pathPrefix: pathPrefix.value, port: { name, number } };
}

function invalid(annotation: string, error: string): { kind: "invalid"; reason: string } {
  return { kind: "invalid", reason: `${annotation}: ${error}` };
}

/** RFC 1123 §2.1 host name label: letters, digits, inner hyphens, 1-63 characters. */
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Comma-separated host names, trimmed and lower-cased (host names are case-insensitive, RFC 4343);
 * empty items (a trailing comma) are skipped, duplicates removed, the first order kept.
 * A leading `*.` label is allowed and means exactly one label, as in Ingress host rules
 * (networking.k8s.io/v1 IngressRule.host): `*.example.com` matches `a.example.com`, not `example.com`
 * nor `a.b.example.com`. A trailing dot, ports, IP literals and `*` anywhere else are rejected.
 */
export function parseHosts(raw: string): Result<string[]> {
  const hosts: string[] = [];
  for (const item of raw.split(",")) {
    const host = item.trim().toLowerCase();
    if (host === "") continue;
    const problem = hostProblem(host);
    if (problem !== undefined) return { ok: false, error: `"${host}" ${problem}` };
    if (!hosts.includes(host)) hosts.push(host);
  }
  if (hosts.length === 0) return { ok: false, error: "lists no host name" };
  return { ok: true, value: hosts };
}

function hostProblem(host: string): string | undefined {
  if (host.length > 253) return "is longer than 253 characters";
  const labels = host.split(".");
  const named = labels[0] === "*" ? labels.slice(1) : labels;
  if (labels[0] === "*" && named.length < 2) return "is a wildcard that needs at least two more labels";
  if (!named.every((label) => LABEL.test(label))) {
    return "is not a DNS host name (labels of a-z, 0-9 and inner '-', optionally a leading '*.')";
  }
  if (/^[0-9]+$/.test(named.at(-1) ?? ""))
    return "is not a host name (numeric top-level label, an IP address?)";
  return undefined;
}

/** Path characters of RFC 3986 §3.3 (pchar and "/"), with percent-encoding. */
const PATH = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/;

/** Defaults to "/"; must start with "/"; trailing slashes are dropped (`/api/` routes like `/api`). */
export function parsePathPrefix(raw: string | undefined): Result<string> {
  if (raw === undefined) return { ok: true, value: "/" };
  const path = raw.trim();
  if (!path.startsWith("/")) return { ok: false, error: `"${raw}" must start with "/"` };
  if (path.length > 1024) return { ok: false, error: "is longer than 1024 characters" };
  if (!PATH.test(path)) return { ok: false, error: `"${raw}" holds characters not allowed in a URL path` };
  const segments = path.split("/");
  if (segments.some((segment) => segment === "." || segment === "..")) {
    return { ok: false, error: `"${raw}" holds a "." or ".." segment` };
  }
  const trimmed = path.replace(/\/+$/, "");
  if (trimmed.includes("//")) return { ok: false, error: `"${raw}" holds an empty segment ("//")` };
  return { ok: true, value: trimmed === "" ? "/" : trimmed };
}

type Translated = ReturnType<typeof translateService>[number];

/**
 * `edgeslice.io/port` names a Service port by name or number; without it the only port is used, else the
 * port named `http`. Only TCP ports can carry HTTP.
 */
function choosePort(ports: readonly Translated[], raw: string | undefined): Result<Translated> {
  const wanted = raw?.trim();
  let chosen: Translated | undefined;
  if (wanted === undefined) {
    if (ports.length === 0) return { ok: false, error: "the Service has no ports" };
    chosen = ports.length === 1 ? ports[0] : ports.find((port) => port.port.name === "http");
    if (chosen === undefined) {
      return { ok: false, error: `not set, and the Service has ${ports.length} ports and none named "http"` };
    }
  } else {
    const byNumber = /^[0-9]+$/.test(wanted);
    const matches = ports.filter((port) =>
      byNumber ? port.port.number === Number(wanted) : port.port.name === wanted,
    );
    const tcp = matches.filter((port) => port.port.protocol === "TCP");
    chosen = tcp[0] ?? matches[0];
    if (chosen === undefined) return { ok: false, error: `"${wanted}" names no port of the Service` };
  }
  if (chosen.port.protocol !== "TCP") {
    return { ok: false, error: `port ${chosen.port.number} is ${chosen.port.protocol}, HTTP needs TCP` };
  }
  return { ok: true, value: chosen };
}
