import type { ServiceRecord } from "../../store/records.js";
import type { Snapshot } from "../../store/store.js";

/** One cluster's Service published under a host + path prefix. */
export interface RouteCandidate {
  readonly cluster: string;
  readonly stale: boolean;
  readonly record: ServiceRecord;
}

/** Everything published under one host + path prefix, across all clusters. */
export interface RouteEntry {
  readonly host: string;
  readonly pathPrefix: string;
  /** Every cluster that publishes the route, stale or not (for admin/explain). */
  readonly candidates: readonly RouteCandidate[];
  /** The candidates traffic may go to: fresh clusters, or all of them when every one is stale. */
  readonly serving: readonly RouteCandidate[];
  /** True when every publishing cluster is stale and the last known backends are served anyway. */
  readonly failStatic: boolean;
  /** Services of the same cluster that also claimed this host + prefix and lost (lexically later id). */
  readonly shadowed: readonly { readonly cluster: string; readonly service: string }[];
}

export interface RouteIndex {
  readonly version: number;
  /** Lower-case host → its routes, longest path prefix first. */
  readonly byHost: ReadonlyMap<string, readonly RouteEntry[]>;
}

const indexes = new WeakMap<Snapshot, RouteIndex>();

/** Memoised on the snapshot's identity: a snapshot is immutable and replaced on any change. */
export function routeIndexOf(snapshot: Snapshot): RouteIndex {
  let index = indexes.get(snapshot);
  if (!index) {
    index = buildRouteIndex(snapshot);
    indexes.set(snapshot, index);
  }
  return index;
}

interface MutableEntry {
  host: string;
  pathPrefix: string;
  byCluster: Map<string, RouteCandidate>;
  shadowed: { cluster: string; service: string }[];
}

export function buildRouteIndex(snapshot: Snapshot): RouteIndex {
  const entries = new Map<string, Map<string, MutableEntry>>();
  for (const cluster of snapshot.clusters) {
    for (const record of cluster.services.values()) {
      const pathPrefix = normalisePrefix(record.pathPrefix);
      for (const rawHost of record.hosts) {
        const host = normaliseHost(rawHost);
        if (host === undefined) continue;
        let prefixes = entries.get(host);
        if (!prefixes) {
          prefixes = new Map();
          entries.set(host, prefixes);
        }
        let entry = prefixes.get(pathPrefix);
        if (!entry) {
          entry = { host, pathPrefix, byCluster: new Map(), shadowed: [] };
          prefixes.set(pathPrefix, entry);
        }
        const existing = entry.byCluster.get(cluster.name);
        // Two Services of one cluster claiming the same host + prefix: the lexically first id wins, so the
        // outcome does not depend on the order records were loaded in.
        if (existing && existing.record.service <= record.service) {
          entry.shadowed.push({ cluster: cluster.name, service: record.service });
          continue;
        }
        if (existing) entry.shadowed.push({ cluster: cluster.name, service: existing.record.service });
        entry.byCluster.set(cluster.name, { cluster: cluster.name, stale: cluster.stale, record });
      }
    }
  }
  const byHost = new Map<string, RouteEntry[]>();
  for (const [host, prefixes] of entries) {
    const routes: RouteEntry[] = [];
    for (const entry of prefixes.values()) routes.push(freeze(entry));
    routes.sort((a, b) => b.pathPrefix.length - a.pathPrefix.length);
    byHost.set(host, routes);
  }
  return { version: snapshot.version, byHost };
}

function freeze(entry: MutableEntry): RouteEntry {
  const candidates = [...entry.byCluster.values()].sort((a, b) => (a.cluster < b.cluster ? -1 : 1));
  const fresh = candidates.filter((candidate) => !candidate.stale);
  // DESIGN.md "Store": drop stale clusters unless every cluster is stale (fail static).
  const failStatic = fresh.length === 0;
  return {
    host: entry.host,
    pathPrefix: entry.pathPrefix,
    candidates,
    serving: failStatic ? candidates : fresh,
    failStatic,
    shadowed: entry.shadowed,
  };
}

/**
 * The longest published prefix that matches `path` on a segment boundary, or undefined (→ 404). An exact
 * host wins over a wildcard; `*.example.com` covers exactly one more label, as Ingress host wildcards do.
 */
export function lookupRoute(index: RouteIndex, host: string, path: string): RouteEntry | undefined {
  const exact = longestPrefixMatch(index.byHost.get(host), path);
  if (exact) return exact;
  const dot = host.indexOf(".");
  if (dot <= 0 || host.startsWith("[")) return undefined;
  return longestPrefixMatch(index.byHost.get(`*${host.slice(dot)}`), path);
}

function longestPrefixMatch(routes: readonly RouteEntry[] | undefined, path: string): RouteEntry | undefined {
  if (!routes) return undefined;
  for (const route of routes) {
    if (pathHasPrefix(path, route.pathPrefix)) return route;
  }
  return undefined;
}

/** "/api" matches "/api", "/api/x" and "/api?q", not "/apix". `path` is the origin-form path (query allowed). */
export function pathHasPrefix(path: string, prefix: string): boolean {
  if (prefix === "/") return path.startsWith("/");
  if (!path.startsWith(prefix)) return false;
  if (path.length === prefix.length) return true;
  const next = path.charCodeAt(prefix.length);
  return next === 47 /* / */ || next === 63 /* ? */;
}

/** "/api/" and "/api" are the same prefix: the segment-boundary match makes the trailing slash redundant. */
export function normalisePrefix(prefix: string): string {
  if (prefix.length > 1 && prefix.endsWith("/")) return prefix.replace(/\/+$/, "") || "/";
  return prefix;
}

/**
 * Host header or URL authority → lookup key: lower case, port stripped, one trailing dot stripped
 * (RFC 1034 §3.1 absolute name). IPv6 literals keep their brackets. Undefined when empty or malformed.
 */
export function normaliseHost(authority: string): string | undefined {
  let host = authority.trim().toLowerCase();
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    if (end < 0) return undefined;
    host = host.slice(0, end + 1);
  } else {
    const colon = host.indexOf(":");
    if (colon >= 0) host = host.slice(0, colon);
    if (host.endsWith(".")) host = host.slice(0, -1);
  }
  return host === "" ? undefined : host;
}
