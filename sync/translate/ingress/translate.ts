import * as v from "valibot";
import { byCodeUnits } from "../../../lib/code-unit-order.js";
import {
  MATCH_EVERYTHING,
  ROUTE_SCHEMA_VERSION,
  type RouteRecord,
  RouteRecordSchema,
  type RouteRule,
  routeId,
} from "../../../store/routes.js";
import { serviceMap } from "../gateway/backends.js";
import { creationTimeOf, keyOf, namespaceOf } from "../gateway/objects.js";
import type { Problem } from "../gateway/translate.js";
import type { KubeService } from "../kube-objects.js";
import { ingressClassChooser } from "./class.js";
import type { Ingress, IngressClass } from "./objects.js";
import { ingressBackend, ingressMatch } from "./paths.js";

/** An address to publish in `status.loadBalancer.ingress` (core/v1 LoadBalancerIngress). */
export interface LoadBalancerIngress {
  readonly ip?: string;
  readonly hostname?: string;
}

export interface IngressInput {
  /** IngressClass.spec.controller that marks a class as ours, e.g. `edgeslice.io/ingress-controller`. */
  readonly controllerName: string;
  readonly ingressClasses: readonly IngressClass[];
  readonly ingresses: readonly Ingress[];
  readonly services: readonly KubeService[];
  /** What to publish as status.loadBalancer.ingress; left empty unless configured. */
  readonly loadBalancer?: readonly LoadBalancerIngress[];
}

export interface IngressStatus {
  readonly loadBalancer: { readonly ingress?: readonly LoadBalancerIngress[] };
}

export interface IngressTranslation {
  /** Sorted by id. */
  readonly routes: readonly RouteRecord[];
  /** Our Ingresses, by `namespace/name`. */
  readonly statuses: { readonly ingresses: ReadonlyMap<string, IngressStatus> };
  readonly problems: readonly Problem[];
}

/**
 * Route ids of one Ingress: its rules are grouped by host, one record per host, because a record's hostnames
 * apply to all its rules. The part after "#" cannot be mistaken for another: hosts never contain "#" or ":".
 */
export function ingressRouteId(
  namespace: string,
  name: string,
  part: { readonly host: string } | "any-host" | "default-backend",
): string {
  const suffix = typeof part === "string" ? part : `host:${part.host}`;
  return `${routeId("ingress", namespace, name)}#${suffix}`;
}

/**
 * Ingresses of our IngressClass → route records. Rules with a host serve that host (`*.example.com` covers
 * exactly one label, networking.k8s.io/v1 IngressRule.host); rules without a host serve every host; the
 * defaultBackend serves what no rule of any route matches (a fallback record). Pure and deterministic.
 */
export function translateIngresses(input: IngressInput): IngressTranslation {
  const choose = ingressClassChooser(input.ingressClasses, input.controllerName);
  const context = { services: serviceMap(input.services), grants: [] };
  const status: IngressStatus =
    input.loadBalancer && input.loadBalancer.length > 0
      ? { loadBalancer: { ingress: input.loadBalancer.map((item) => ({ ...item })) } }
      : { loadBalancer: {} };
  const routes: RouteRecord[] = [];
  const statuses = new Map<string, IngressStatus>();
  const problems: Problem[] = [];
  for (const ingress of [...input.ingresses].sort((a, b) => byCodeUnits(keyOf(a), keyOf(b)))) {
    if (!choose(ingress).ours) continue;
    const key = keyOf(ingress);
    statuses.set(key, status);
    const report = (reason: string) => problems.push({ object: `Ingress ${key}`, reason });
    for (const record of ingressRecords(ingress, context, report)) {
      const checked = v.safeParse(RouteRecordSchema, record);
      if (checked.success) routes.push(checked.output);
      else report(`${record.id} does not validate: ${checked.issues[0]?.message ?? "invalid"}`);
    }
  }
  routes.sort((a, b) => byCodeUnits(a.id, b.id));
  return { routes, statuses: { ingresses: statuses }, problems };
}

function ingressRecords(
  ingress: Ingress,
  context: Parameters<typeof ingressBackend>[2],
  report: (reason: string) => void,
): RouteRecord[] {
  const namespace = namespaceOf(ingress);
  const name = ingress.metadata.name;
  const byHost = new Map<string, RouteRule[]>();
  for (const rule of ingress.spec?.rules ?? []) {
    const host = (rule.host ?? "").toLowerCase();
    for (const path of rule.http?.paths ?? []) {
      const match = ingressMatch(path);
      if (!match.ok) {
        report(`${host || "any host"}: ${match.error}; path left out`);
        continue;
      }
      const resolved = ingressBackend(path.backend, namespace, context);
      if (resolved.problem) report(`${host || "any host"} ${match.value.path.value}: ${resolved.problem}`);
      const rules = byHost.get(host) ?? [];
      rules.push({ matches: [match.value], filters: {}, backends: [resolved.backend] });
      byHost.set(host, rules);
    }
  }
  const base = {
    v: ROUTE_SCHEMA_VERSION,
    source: "ingress",
    createdAt: creationTimeOf(ingress.metadata),
  } as const;
  const records: RouteRecord[] = [...byHost.keys()].sort(byCodeUnits).map((host) => ({
    ...base,
    id: ingressRouteId(namespace, name, host === "" ? "any-host" : { host }),
    hostnames: host === "" ? [] : [host],
    wildcard: "one-label",
    rules: byHost.get(host) ?? [],
  }));
  const fallback = ingress.spec?.defaultBackend;
  if (fallback) {
    const resolved = ingressBackend(fallback, namespace, context);
    if (resolved.problem) report(`defaultBackend: ${resolved.problem}`);
    records.push({
      ...base,
      id: ingressRouteId(namespace, name, "default-backend"),
      hostnames: [],
      wildcard: "one-label",
      fallback: true,
      rules: [{ matches: [MATCH_EVERYTHING], filters: {}, backends: [resolved.backend] }],
    });
  }
  if (records.length === 0) report("no rule with paths and no defaultBackend: nothing to route");
  return records;
}
