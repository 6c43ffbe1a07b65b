import { countListeners, type ListenerUses, listenersOf } from "./listener-uses.js";
import { type RouteCandidate, type RoutedEntry, routeContribution } from "./route-candidates.js";
import {
  type Bucket,
  belongsIn,
  byRank,
  indexBucket,
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
  const update = new TableUpdate(table, gateways, tableKind);
  for (const [id, changed] of changes) if (!update.change(id, changed)) return undefined;
  return update.table();
}

/** A host bucket a change touches (by `kind key`): the candidates to add to it. */
interface TouchedBucket<T> {
  readonly kind: string;
  readonly key: string;
  readonly added: RouteCandidate<T>[];
}

/** The changes of one update, collected id by id, then applied to the buckets they touch. */
class TableUpdate<T extends RoutedEntry> {
  readonly #table: RouteTable<T>;
  readonly #gateways: ReadonlySet<string> | undefined;
  readonly #kind: RouteTableKind;
  /** The ids changed: their old candidates leave every bucket touched. */
  readonly #ids = new Set<string>();
  readonly #entryChanges: [string, T | undefined][] = [];
  readonly #touched = new Map<string, TouchedBucket<T>>();
  readonly #uses: ListenerUses;

  constructor(table: RouteTable<T>, gateways: ReadonlySet<string> | undefined, kind: RouteTableKind) {
    this.#table = table;
    this.#gateways = gateways;
    this.#kind = kind;
    this.#uses = new Map(table.listenerUses);
  }

  /** Takes route `id` out and puts `changed` in; false for an id named twice or an entry filed under another. */
  change(id: string, changed: T | undefined): boolean {
    if (this.#ids.has(id) || (changed !== undefined && changed.route.id !== id)) return false;
    // A route of the other kind is not in this table: as if it were gone (buildRouteTable leaves it out).
    const entry = changed !== undefined && belongsIn(this.#kind, changed.route) ? changed : undefined;
    this.#ids.add(id);
    const old = this.#table.entries.get(id);
    if (entry === undefined && old === undefined) return true;
    this.#entryChanges.push([id, entry]);
    if (old) {
      const contribution = routeContribution(old, this.#gateways);
      countListeners(this.#uses, contribution.listeners, -1);
      for (const { kind, key } of contribution.buckets) this.#touch(kind, key);
    }
    if (entry) {
      const contribution = routeContribution(entry, this.#gateways);
      countListeners(this.#uses, contribution.listeners, 1);
      for (const { kind, key, candidates } of contribution.buckets) {
        this.#touch(kind, key).added.push(...candidates);
      }
    }
    return true;
  }

  /** The table after every change; the same table when nothing of its kind changed (what was built on it stays valid). */
  table(): RouteTable<T> {
    const table = this.#table;
    if (this.#entryChanges.length === 0) return table;
    const uses = this.#uses;
    const listenersChanged =
      uses.size !== table.listenerUses.size || [...uses.keys()].some((key) => !table.listenerUses.has(key));
    return {
      ...this.#rebuiltBuckets(),
      indexes: table.indexes,
      duplicates: table.duplicates,
      ...(listenersChanged
        ? listenersOf(uses)
        : { listenerPorts: table.listenerPorts, listenerHostnames: table.listenerHostnames }),
      entries: table.entries.withChanges(this.#entryChanges),
      listenerUses: uses,
    };
  }

  /** Each touched bucket without the changed ids' candidates, with the new ones sorted in (indexed if large). */
  #rebuiltBuckets(): Pick<RouteTable<T>, "exact" | "wildcard" | "anyHost" | "longestWildcard"> {
    const table = this.#table;
    const exact: [string, Bucket<T> | undefined][] = [];
    const wildcard: [string, Bucket<T> | undefined][] = [];
    let anyHost = table.anyHost;
    let longestWildcard = table.longestWildcard;
    for (const { kind, key, added } of this.#touched.values()) {
      const before =
        kind === "exact" ? table.exact.get(key) : kind === "wildcard" ? table.wildcard.get(key) : anyHost;
      const kept = (before ?? []).filter((candidate) => !this.#ids.has(candidate.entry.route.id));
      const bucket = added.length === 0 ? kept : [...kept, ...added].sort(byRank);
      indexBucket(table.indexes, bucket);
      const value = bucket.length > 0 ? bucket : undefined;
      if (kind === "exact") exact.push([key, value]);
      else if (kind === "wildcard") {
        wildcard.push([key, value]);
        if (value) longestWildcard = Math.max(longestWildcard, key.length);
      } else anyHost = bucket;
    }
    return {
      exact: exact.length > 0 ? table.exact.withChanges(exact) : table.exact,
      wildcard: wildcard.length > 0 ? table.wildcard.withChanges(wildcard) : table.wildcard,
      longestWildcard,
      anyHost,
    };
  }

  #touch(kind: string, key: string): TouchedBucket<T> {
    const id = `${kind} ${key}`;
    let bucket = this.#touched.get(id);
    if (!bucket) {
      bucket = { kind, key, added: [] };
      this.#touched.set(id, bucket);
    }
    return bucket;
  }
}
