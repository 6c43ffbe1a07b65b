import {
  type PooledListener,
  type RouteCandidate,
  type RoutedEntry,
  routeContribution,
} from "./route-candidates.js";
import {
  type Bucket,
  belongsIn,
  byRank,
  countListeners,
  indexBucket,
  listenersOf,
  type RouteTable,
  type RouteTableKind,
} from "./route-table.js";

/** One route id's entry after a change: the new entry, or undefined when the route is gone. */
export type RouteTableChange<T> = readonly [id: string, entry: T | undefined];

/**
 * `table` with some routes replaced, added or removed: a pure function of the table and the change, whose
 * result equals buildRouteTable over the changed set of entries (test/property/route-table-update.test.ts).
 * Only the host buckets of the routes named are rebuilt (their candidates taken out, the new ones put in and
 * sorted, large ones indexed again); every other bucket, and the persistent maps' untouched parts, are shared
 * with `table`, so the cost follows the change and the buckets it touches, not the table's size. Undefined
 * when the change cannot be applied so (a table with duplicate ids, an entry filed under another id): the
 * caller builds the table whole.
 */
export function updateRouteTable<T extends RoutedEntry>(
  table: RouteTable<T>,
  changes: Iterable<RouteTableChange<T>>,
  gateways?: ReadonlySet<string>,
  tableKind: RouteTableKind = "http",
): RouteTable<T> | undefined {
  if (table.duplicates.length > 0) return undefined;
  const ids = new Set<string>();
  const entryChanges: [string, T | undefined][] = [];
  /** Touched buckets by `kind key`: the candidates to add to each. */
  const touched = new Map<string, { kind: string; key: string; added: RouteCandidate<T>[] }>();
  const touch = (kind: string, key: string) => {
    const id = `${kind} ${key}`;
    let bucket = touched.get(id);
    if (!bucket) {
      bucket = { kind, key, added: [] };
      touched.set(id, bucket);
    }
    return bucket;
  };
  const uses = new Map<string, { listener: PooledListener; routes: number }>(table.listenerUses);
  for (const [id, changed] of changes) {
    if (ids.has(id) || (changed !== undefined && changed.route.id !== id)) return undefined;
    // A route of the other kind is not in this table: as if it were gone (buildRouteTable leaves it out).
    const entry = changed !== undefined && belongsIn(tableKind, changed.route) ? changed : undefined;
    ids.add(id);
    const old = table.entries.get(id);
    if (entry === undefined && old === undefined) continue;
    entryChanges.push([id, entry]);
    if (old) {
      const contribution = routeContribution(old, gateways);
      countListeners(uses, contribution.listeners, -1);
      for (const { kind, key } of contribution.buckets) touch(kind, key);
    }
    if (entry) {
      const contribution = routeContribution(entry, gateways);
      countListeners(uses, contribution.listeners, 1);
      for (const { kind, key, candidates } of contribution.buckets)
        touch(kind, key).added.push(...candidates);
    }
  }
  // Nothing of this table's kind changed: the table itself, so what was built on it stays valid.
  if (entryChanges.length === 0) return table;
  const exact: [string, Bucket<T> | undefined][] = [];
  const wildcard: [string, Bucket<T> | undefined][] = [];
  let anyHost = table.anyHost;
  let longestWildcard = table.longestWildcard;
  for (const { kind, key, added } of touched.values()) {
    const before =
      kind === "exact" ? table.exact.get(key) : kind === "wildcard" ? table.wildcard.get(key) : anyHost;
    const kept = (before ?? []).filter((candidate) => !ids.has(candidate.entry.route.id));
    const bucket = added.length === 0 ? kept : [...kept, ...added].sort(byRank);
    indexBucket(table.indexes, bucket);
    const value = bucket.length > 0 ? bucket : undefined;
    if (kind === "exact") exact.push([key, value]);
    else if (kind === "wildcard") {
      wildcard.push([key, value]);
      if (value) longestWildcard = Math.max(longestWildcard, key.length);
    } else anyHost = bucket;
  }
  const listenersChanged =
    uses.size !== table.listenerUses.size || [...uses.keys()].some((key) => !table.listenerUses.has(key));
  return {
    exact: exact.length > 0 ? table.exact.withChanges(exact) : table.exact,
    wildcard: wildcard.length > 0 ? table.wildcard.withChanges(wildcard) : table.wildcard,
    longestWildcard,
    anyHost,
    indexes: table.indexes,
    duplicates: table.duplicates,
    ...(listenersChanged
      ? listenersOf(uses)
      : { listenerPorts: table.listenerPorts, listenerHostnames: table.listenerHostnames }),
    entries: table.entries.withChanges(entryChanges),
    listenerUses: uses,
  };
}
