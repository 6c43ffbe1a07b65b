import { normalisePathPrefix } from "../../../store/paths.js";
import type { RouteMatch, RouteRecord } from "../../../store/routes.js";
import { listenerPoolKey, type ServedListener, servedListeners } from "./listener-ports.js";
import { type MatchRank, rankOf } from "./precedence.js";

/** One match of one rule of a route, as a host bucket of the route table (route-table.ts) holds it. */
export interface RouteCandidate<T> {
  readonly entry: T;
  readonly ruleIndex: number;
  readonly matchIndex: number;
  readonly match: RouteMatch;
  /** For wildcard buckets: the pattern also covers hosts more than one label deeper. */
  readonly deep: boolean;
  readonly rank: MatchRank;
  /** The PathPrefix value normalised once (request-match.ts normalisePathPrefix); undefined for Exact. */
  readonly prefix: string | undefined;
  readonly ruleKey: string;
  /** The listeners this host bucket serves the route through; undefined: every port (listener-ports.ts). */
  readonly listeners: readonly ServedListener[] | undefined;
}

/** Where one route's candidates go: an exact host, a wildcard suffix (`*.` dropped), or the catch-all. */
export interface BucketCandidates<T> {
  readonly kind: "exact" | "wildcard" | "any";
  /** The host or suffix; "" for the catch-all. */
  readonly key: string;
  readonly candidates: RouteCandidate<T>[];
}

/**
 * One listener a route uses in one of its clusters, counted once per route (listener isolation reads every
 * hostname of that cluster's listeners of the Gateway and port: their pool).
 */
export interface ListenerUse {
  readonly key: string;
  readonly listener: PooledListener;
}

/** A listener hostname in one pool (listener-ports.ts listenerPoolKey). */
export interface PooledListener {
  readonly pool: string;
  readonly port: number;
  readonly listenerHostname: string;
}

export interface RouteContribution<T> {
  readonly buckets: readonly BucketCandidates<T>[];
  readonly listeners: readonly ListenerUse[];
}

/** What a route table holds: a route, and the clusters serving it when the caller knows them. */
export interface RoutedEntry {
  readonly route: RouteRecord;
  readonly clusters?: readonly { readonly name: string }[];
}

/** Identity of one rule of one route object, the same in every cluster that publishes it. */
export function ruleKey(routeId: string, ruleIndex: number): string {
  return `${routeId}[${ruleIndex}]`;
}

/** The key listener uses are counted under: the pool (cluster, Gateway, port) and the listener's own hostname. */
export function listenerUseKey(listener: PooledListener): string {
  return `${listener.pool}\u0000${listener.listenerHostname}`;
}

/** The names of the clusters an entry is served from ([""] for an entry that names none). */
function clusterNamesOf(entry: { readonly clusters?: readonly { readonly name: string }[] }): string[] {
  return entry.clusters ? entry.clusters.map((cluster) => cluster.name) : [""];
}

/**
 * What one route adds to a route table: its candidates per host bucket (unsorted) and the listeners it is
 * served through. The full build (route-table.ts) and the update (route-table-update.ts) both add routes
 * through here, so a table updated route by route holds what a table built at once does.
 */
export function routeContribution<T extends RoutedEntry>(
  entry: T,
  gateways: ReadonlySet<string> | undefined,
): RouteContribution<T> {
  const route = entry.route;
  const deep = route.wildcard === "suffix";
  const served = servedListeners(route, gateways, clusterNamesOf(entry));
  const listeners = new Map<string, ListenerUse>();
  for (const list of served?.values() ?? []) {
    for (const { gateway, port, listenerHostname, clusters } of list) {
      for (const cluster of clusters) {
        const listener = { pool: listenerPoolKey(cluster, gateway, port), port, listenerHostname };
        listeners.set(listenerUseKey(listener), { key: listenerUseKey(listener), listener });
      }
    }
  }
  const buckets = new Map<string, BucketCandidates<T>>();
  const add = (kind: BucketCandidates<T>["kind"], key: string, candidate: RouteCandidate<T>) => {
    const id = `${kind} ${key}`;
    const bucket = buckets.get(id);
    if (bucket) bucket.candidates.push(candidate);
    else buckets.set(id, { kind, key, candidates: [candidate] });
  };
  route.rules.forEach((rule, ruleIndex) => {
    rule.matches.forEach((match, matchIndex) => {
      const base = {
        entry,
        ruleIndex,
        matchIndex,
        match,
        deep,
        rank: rankOf(route, ruleIndex, matchIndex),
        prefix: match.path.type === "PathPrefix" ? normalisePathPrefix(match.path.value) : undefined,
        ruleKey: ruleKey(route.id, ruleIndex),
      };
      const candidate = (hostname: string | undefined): RouteCandidate<T> | undefined => {
        if (served === undefined) return { ...base, listeners: undefined };
        const through = served.get(hostname);
        return through === undefined ? undefined : { ...base, listeners: through };
      };
      if (route.hostnames.length === 0) {
        const any = candidate(undefined);
        if (any) add("any", "", any);
      }
      for (const hostname of new Set(route.hostnames)) {
        const found = candidate(hostname);
        if (!found) continue;
        if (hostname.startsWith("*.")) add("wildcard", hostname.slice(2), found);
        else add("exact", hostname, found);
      }
    });
  });
  return { buckets: [...buckets.values()], listeners: [...listeners.values()] };
}
