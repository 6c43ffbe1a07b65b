import type { RouteRecord, RouteRule } from "../store/routes.js";
import { HOSTS_ANNOTATION, parseHosts } from "../sync/translate/exposure.js";
import type { KubeService } from "../sync/translate/kube-objects.js";
import type { DemoBackend } from "./demo-backend.js";

/** What `npm start` prints once everything runs: what to curl, built from what examples/ publishes. */
export interface BannerInfo {
  readonly url: string;
  /** The admin listener (ADMIN_PORT): explain, metrics and the dashboard answer only there. */
  readonly adminUrl: string;
  readonly store: string;
  readonly backends: readonly DemoBackend[];
  /** Hosts of the annotated Services, in manifest order. */
  readonly hosts: readonly string[];
  /** The HTTPRoute and Ingress routes the folder publishes, in id order. */
  readonly routes: readonly RouteRecord[];
  readonly adminToken: string;
  readonly ipFamily: string;
  /** With `--https`: the port HTTPS_PORT was bound to and the certificate's file, for curl --cacert. */
  readonly https?: { readonly port: number; readonly caFile: string };
}

/** Each Service's hosts as the sync publishes them; a Service whose annotation is invalid is not routed. */
export function exposedHosts(services: readonly KubeService[]): string[] {
  return services.flatMap((service) => {
    const raw = service.metadata.annotations?.[HOSTS_ANNOTATION];
    const hosts = raw === undefined ? undefined : parseHosts(raw);
    return hosts?.ok ? hosts.value : [];
  });
}

const MAX_RULES_SHOWN = 4;
const KIND_OF_SOURCE: Readonly<Record<string, string>> = { httproute: "HTTPRoute", ingress: "Ingress" };

/**
 * One curl per rule of an HTTPRoute or Ingress route (its first match: path, headers, method), with what the
 * rule does; a rule that splits by weight gets a loop that counts which Service answered (the demo backends
 * start their answer with the Service's name).
 */
export function routeTryLines(route: RouteRecord, url: string): string[] {
  if (route.source === "annotation") return [];
  const host = route.hostnames.find((hostname) => !hostname.startsWith("*."));
  // A route for every host answers whatever Host curl sends.
  if (host === undefined && route.hostnames.length > 0) return [];
  const hostFlag = host === undefined ? "" : ` -H 'Host: ${host}'`;
  const [source, rest = ""] = route.id.split(/:(.*)/s);
  const object = `${KIND_OF_SOURCE[source ?? ""] ?? source} ${rest.split("#")[0]}`;
  const lines: string[] = [];
  for (const rule of route.rules.slice(0, MAX_RULES_SHOWN)) {
    const match = rule.matches[0];
    if (match === undefined) continue;
    const method = match.method && match.method !== "GET" ? ` -X ${match.method}` : "";
    const headers = match.headers.map((header) => ` -H '${header.name}: ${header.value}'`).join("");
    const request = `${method}${hostFlag}${headers} ${url}${match.path.value}`;
    lines.push(`  curl${request}   # ${object}: ${ruleOutcome(rule)}`);
    if (rule.backends.filter((backend) => backend.weight > 0).length > 1) {
      lines.push(
        `  for i in $(seq 20); do curl -s${request}; done | cut -d' ' -f1 | sort | uniq -c   # the split`,
      );
    }
  }
  return lines;
}

function ruleOutcome(rule: RouteRule): string {
  const { redirect } = rule.filters;
  if (redirect) return `${redirect.statusCode} redirect`;
  const total = rule.backends.reduce((sum, backend) => sum + backend.weight, 0);
  if (total === 0) return "500 (no backend with a weight)";
  const shares = rule.backends
    .filter((backend) => backend.weight > 0)
    .map((backend) => {
      const name = "service" in backend ? backend.service : "500 (invalid backend)";
      return rule.backends.length > 1 ? `${Math.round((backend.weight / total) * 100)}% ${name}` : name;
    });
  return shares.join(", ");
}

/**
 * With `--https`, a curl over TLS per demo host (the first annotated one, the first HTTPRoute and Ingress
 * ones): SNI and Host are the host's name, resolved to 127.0.0.1, and the self-signed certificate is trusted
 * by its file, not skipped with -k.
 */
export function httpsTryLines(info: BannerInfo): string[] {
  const { https } = info;
  if (!https) return [];
  const routed = info.routes
    .filter((route) => route.source !== "annotation")
    .map((route) => ({
      host: route.hostnames.find((hostname) => !hostname.startsWith("*.")),
      path: route.rules[0]?.matches[0]?.path.value ?? "/",
    }));
  const tries = [{ host: info.hosts[0], path: "/" }, ...routed].filter((each) => each.host !== undefined);
  const seen = new Set<string | undefined>();
  return tries
    .filter(({ host }) => !seen.has(host) && seen.add(host))
    .map(
      ({ host, path }) =>
        `  curl --cacert ${https.caFile} --resolve ${host}:${https.port}:127.0.0.1 https://${host}:${https.port}${path}`,
    );
}

export function banner(info: BannerInfo): string {
  const lines = [
    "",
    `edgeslice all-in-one is running: router ${info.url}, admin ${info.adminUrl}, store: ${info.store}, IP_FAMILY=${info.ipFamily}`,
    `demo backends: ${info.backends.map((b) => `${b.address} (${b.family})`).join(", ") || "none"}`,
    "",
    "Try:",
    ...info.hosts.map((host) => `  curl -H 'Host: ${host}' ${info.url}/`),
    ...info.routes.flatMap((route) => routeTryLines(route, info.url)),
    ...httpsTryLines(info),
    `  curl -H 'Host: nothing.localhost' ${info.url}/        # 404 {"error":"no_route"}`,
    `  curl ${info.url}/_edgeslice/readyz`,
  ];
  const auth = info.adminToken ? ` -H 'Authorization: Bearer ${info.adminToken}'` : "";
  const explainHosts = [info.hosts[0] ?? "web.localhost"];
  // The first HTTPRoute or Ingress host too: explain shows its rules, weights and the backend chosen.
  const routed = info.routes.find((route) => route.source !== "annotation")?.hostnames[0];
  if (routed !== undefined && !routed.startsWith("*.")) explainHosts.push(routed);
  for (const host of explainHosts) {
    lines.push(`  curl${auth} '${info.adminUrl}/_edgeslice/explain?host=${host}&path=/'`);
  }
  lines.push(`  curl${auth} ${info.adminUrl}/_edgeslice/metrics`);
  if (!info.adminToken)
    lines.push("  (admin endpoints other than the probes need ADMIN_TOKEN: ADMIN_TOKEN=secret npm start)");
  else lines.push(`  dashboard: ${info.adminUrl}/_edgeslice/ui (token ${info.adminToken})`);
  lines.push(
    "",
    "Each answer names the backend and the address family that served it. web.localhost is dual-stack and",
    "IP_FAMILY=PreferIPv4 sends it to 127.0.0.1 (IP_FAMILY=PreferIPv6 npm start sends it to ::1); api.localhost",
    "is IPv6-only and is answered from ::1 by its ready pod, never by the terminating one. So the curls above",
    "are answered over both families. The HTTPRoute and Ingress lines come from the Gateway API and Ingress",
    "objects of the examples; edit them and restart to see your own rules. Ctrl-C stops everything.",
    "",
  );
  return `${lines.join("\n")}\n`;
}
