import { PersistentMap } from "../../../lib/persistent-map.js";
import { pathOf } from "../../../store/paths.js";
import {
  isPassthroughRoute,
  type RouteMatch,
  type RouteRecord,
  type RouteRule,
} from "../../../store/routes.js";
import { effectivePort, type ListenerHostnames, listenerServes } from "./listener-ports.js";
import { countListeners, type ListenerUses, listenersOf } from "./listener-uses.js";
import { buildPathIndex, INDEXED_BUCKET_SIZE, type PathIndex, pathCandidates } from "./path-index.js";
import { compareRanks, type MatchRank } from "./precedence.js";
import { hasPathPrefix, headersMatch, queryParamsMatch, type RequestFacts } from "./request-match.js";
import {
  type BucketCandidates,
  type PooledListener,
  type RouteCandidate,
  type RoutedEntry,
  routeContribution,
} from "./route-candidates.js";

export { ruleKey } from "./route-candidates.js";

/**
 * The request matcher over route records, built once per snapshot. Records are bucketed by host
 * pattern so a request looks at the routes of its own host only: its exact host, then each wildcard
 * suffix from the longest, then the catch-all routes (no hostnames). Gateway API HTTPRoute.hostnames:
 * "precedence must be given to rules from the HTTPRoute with the largest number of: characters in a
 * matching non-wildcard hostname; characters in a matching hostname" — so an exact host outranks every
 * wildcard, a longer wildcard a shorter one. Within a bucket the match precedence of precedence.ts applies.
 * A request no match of a bucket accepts falls through to the next bucket, then to 404.
 */
export type Bucket<T> = readonly RouteCandidate<T>[];

/**
 * The path index of each large bucket, by the bucket's identity. Shared by a table and the tables updated from
 * it (route-table-update.ts): a bucket is never changed once built, so an entry never goes out of date, and
 * the buckets no table holds any more drop out with them.
 */
export type PathIndexes<T> = WeakMap<Bucket<T>, PathIndex<RouteCandidate<T>>>;

/**
 * Persistent maps (lib/persistent-map.ts): an update (route-table-update.ts) shares every bucket it does not
 * touch with the table it starts from.
 */
export interface RouteTable<T> {
  /** Exact host → its candidates, best first. */
  readonly exact: PersistentMap<Bucket<T>>;
  /** `*.example.com` is kept under `example.com`. */
  readonly wildcard: PersistentMap<Bucket<T>>;
  /**
   * No key of `wildcard` is longer (0 when none): no longer suffix of a Host is looked up. After updates it
   * may exceed the longest key left (a bound, not the maximum).
   */
  readonly longestWildcard: number;
  readonly anyHost: Bucket<T>;
  /** The path index of each bucket of at least INDEXED_BUCKET_SIZE candidates (path-index.ts). */
  readonly indexes: PathIndexes<T>;
  /** Ids given more than once: the first entry was kept (merge clusters first, see clusters.ts). */
  readonly duplicates: readonly string[];
  /** Every port a listener of the table's routes uses (listener-ports.ts effectivePort). */
  readonly listenerPorts: ReadonlySet<number>;
  /** The hostnames of the listeners per pool (one cluster's, of one Gateway and port), for listener isolation. */
  readonly listenerHostnames: ListenerHostnames;
  /** The entry of each route id: what an update finds a route's old candidates through. */
  readonly entries: PersistentMap<T>;
  /** How many routes are served through each listener (route-candidates.ts listenerUseKey). */
  readonly listenerUses: ReadonlyMap<string, { readonly listener: PooledListener; readonly routes: number }>;
}

export interface RouteMatchResult<T> {
  readonly entry: T;
  readonly route: RouteRecord;
  readonly rule: RouteRule;
  readonly ruleIndex: number;
  readonly match: RouteMatch;
  readonly matchIndex: number;
  /** Same for the same rule of the same route object in every cluster. */
  readonly ruleKey: string;
  /** The host pattern that matched: the host itself, `*.<suffix>`, or undefined for a catch-all route. */
  readonly hostname: string | undefined;
}

export function byRank<T>(a: RouteCandidate<T>, b: RouteCandidate<T>): number {
  return compareRanks(a.rank, b.rank);
}

/**
 * Which routes a table holds: HTTP routes (every source but `tlsroute`), or passthrough routes (TLSRoutes,
 * matched by a TLS connection's server name: routes/passthrough.ts). No table holds both, so no HTTP request
 * can ever match a TLSRoute, on any runtime.
 */
export type RouteTableKind = "http" | "passthrough";

/** Whether `route` belongs in a table of `kind`. */
export function belongsIn(kind: RouteTableKind, route: RouteRecord): boolean {
  return isPassthroughRoute(route) === (kind === "passthrough");
}

/**
 * `entries` carry their route plus whatever the caller wants back with a match (clusters, backends).
 * `gateways`: the Gateways this router implements (GATEWAYS); undefined, every Gateway. Entries of the other
 * kind (RouteTableKind) are left out.
 */
export function buildRouteTable<T extends RoutedEntry>(
  entries: readonly T[],
  gateways?: ReadonlySet<string>,
  kind: RouteTableKind = "http",
): RouteTable<T> {
  const buckets: HostBuckets<T> = { exact: new Map(), wildcard: new Map(), anyHost: [] };
  const kept = new Map<string, T>();
  const duplicates: string[] = [];
  const uses: ListenerUses = new Map();
  for (const entry of entries) {
    if (!belongsIn(kind, entry.route)) continue;
    const id = entry.route.id;
    if (kept.has(id)) {
      duplicates.push(id);
      continue;
    }
    kept.set(id, entry);
    const contribution = routeContribution(entry, gateways);
    countListeners(uses, contribution.listeners, 1);
    fileCandidates(buckets, contribution.buckets);
  }
  const { exact, wildcard, anyHost } = buckets;
  for (const bucket of exact.values()) bucket.sort(byRank);
  for (const bucket of wildcard.values()) bucket.sort(byRank);
  anyHost.sort(byRank);
  let longestWildcard = 0;
  for (const suffix of wildcard.keys()) longestWildcard = Math.max(longestWildcard, suffix.length);
  const indexes: PathIndexes<T> = new WeakMap();
  for (const bucket of [...exact.values(), ...wildcard.values(), anyHost]) indexBucket(indexes, bucket);
  return {
    exact: PersistentMap.from<Bucket<T>>(exact),
    wildcard: PersistentMap.from<Bucket<T>>(wildcard),
    longestWildcard,
    anyHost,
    indexes,
    duplicates,
    ...listenersOf(uses),
    entries: PersistentMap.from(kept),
    listenerUses: uses,
  };
}

/** The host buckets of a table being built, unsorted. */
interface HostBuckets<T> {
  readonly exact: Map<string, RouteCandidate<T>[]>;
  readonly wildcard: Map<string, RouteCandidate<T>[]>;
  readonly anyHost: RouteCandidate<T>[];
}

/** Puts one route's candidates into their host buckets. */
function fileCandidates<T>(buckets: HostBuckets<T>, contribution: readonly BucketCandidates<T>[]): void {
  for (const { kind, key, candidates } of contribution) {
    const map = kind === "exact" ? buckets.exact : kind === "wildcard" ? buckets.wildcard : undefined;
    const bucket = map ? map.get(key) : buckets.anyHost;
    if (bucket) for (const candidate of candidates) bucket.push(candidate);
    else map?.set(key, candidates);
  }
}

/** Indexes a bucket large enough to be worth it (path-index.ts). */
export function indexBucket<T>(indexes: PathIndexes<T>, bucket: Bucket<T>): void {
  if (bucket.length >= INDEXED_BUCKET_SIZE && !indexes.has(bucket))
    indexes.set(bucket, buildPathIndex(bucket));
}

/**
 * The winning rule for a request, or undefined (404). `host` must be normalised already: lower case,
 * no port, no trailing dot (hosts.ts normaliseHost); the Gateway API ignores the Host port.
 */
export function matchRoute<T extends { readonly route: RouteRecord }>(
  table: RouteTable<T>,
  host: string,
  facts: RequestFacts,
): RouteMatchResult<T> | undefined {
  const port = effectivePort(table.listenerPorts, facts.port);
  const request = port === facts.port ? facts : { ...facts, port };
  const path = pathOf(request.path);
  // Every bucket that covers the host takes part: the rules of the routes serving a host are ranked together
  // (official HTTPRouteMatchingAcrossRoutes: `/v2` of a `*.com` route beats `/` of an `example.com` route).
  // The more specific host wins only between matches that rank the same (matchOutranks).
  let best: RouteCandidate<T> | undefined = firstMatch(
    table,
    table.exact.get(host),
    host,
    path,
    request,
    false,
  );
  let bestHostname: string | undefined = host;
  const consider = (found: RouteCandidate<T> | undefined, hostname: string | undefined) => {
    if (found && (!best || matchOutranks(found.rank, best.rank))) {
      best = found;
      bestHostname = hostname;
    }
  };
  // IPv6 literals have no labels to strip; an IPv4 literal never matches a host pattern anyway.
  const first = host.indexOf(".");
  if (first > 0 && table.longestWildcard > 0 && !host.startsWith("[")) {
    // Only suffixes no longer than the longest pattern's are looked up: each lookup hashes its key, so a
    // client's Host of thousands of labels would otherwise cost work quadratic in its length.
    let dot = host.indexOf(".", Math.max(first, host.length - table.longestWildcard - 1));
    while (dot > 0) {
      const suffix = host.slice(dot + 1);
      // More than one label before the suffix: only patterns covering deeper hosts apply.
      consider(
        firstMatch(table, table.wildcard.get(suffix), host, path, request, dot > first),
        `*.${suffix}`,
      );
      dot = host.indexOf(".", dot + 1);
    }
  }
  consider(firstMatch(table, table.anyHost, host, path, request, false), undefined);
  return best ? result(best, bestHostname) : undefined;
}

/** Whether `a` wins over `b` on the match alone (precedence.ts without creation time and name). */
function matchOutranks(a: MatchRank, b: MatchRank): boolean {
  if (a.fallback !== b.fallback) return b.fallback;
  if (a.exact !== b.exact) return a.exact;
  if (a.pathLength !== b.pathLength) return a.pathLength > b.pathLength;
  if (a.method !== b.method) return a.method;
  if (a.headers !== b.headers) return a.headers > b.headers;
  return a.queryParams > b.queryParams;
}

function firstMatch<T>(
  table: RouteTable<T>,
  bucket: readonly RouteCandidate<T>[] | undefined,
  host: string,
  path: string,
  request: RequestFacts,
  deepOnly: boolean,
): RouteCandidate<T> | undefined {
  if (!bucket) return undefined;
  const index = bucket.length >= INDEXED_BUCKET_SIZE ? table.indexes.get(bucket) : undefined;
  if (!index) return scan(table, bucket, host, path, request, deepOnly);
  for (const candidates of pathCandidates(index, path)) {
    const found = scan(table, candidates, host, path, request, deepOnly);
    if (found) return found;
  }
  return undefined;
}

function scan<T>(
  table: RouteTable<T>,
  bucket: readonly RouteCandidate<T>[],
  host: string,
  path: string,
  request: RequestFacts,
  deepOnly: boolean,
): RouteCandidate<T> | undefined {
  for (const candidate of bucket) {
    if (deepOnly && !candidate.deep) continue;
    const { listeners } = candidate;
    if (
      listeners !== undefined &&
      !listenerServes(listeners, table.listenerHostnames, request.serverName ?? host, request.port)
    )
      continue;
    // requestMatches, with the prefix normalised when the table was built: this runs on every request.
    const { match, prefix } = candidate;
    if (prefix === undefined ? path !== match.path.value : !hasPathPrefix(path, prefix)) continue;
    if (match.method !== undefined && match.method !== request.method) continue;
    if (match.queryParams !== undefined && !queryParamsMatch(match.queryParams, request.path)) continue;
    if (match.headers.length === 0 || headersMatch(match.headers, request.headers)) return candidate;
  }
  return undefined;
}

function result<T extends { readonly route: RouteRecord }>(
  candidate: RouteCandidate<T>,
  hostname: string | undefined,
): RouteMatchResult<T> {
  const route = candidate.entry.route;
  const rule = route.rules[candidate.ruleIndex] as RouteRule;
  return {
    entry: candidate.entry,
    route,
    rule,
    ruleIndex: candidate.ruleIndex,
    match: candidate.match,
    matchIndex: candidate.matchIndex,
    ruleKey: candidate.ruleKey,
    hostname,
  };
}
