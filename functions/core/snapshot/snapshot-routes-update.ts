import { byCodeUnits } from "../../../lib/code-unit-order.js";
import { PersistentMap } from "../../../lib/persistent-map.js";
import type { RouteRecord } from "../../../store/routes.js";
import type { ClusterView, Snapshot } from "../../../store/store.js";
import { mergeAcrossClusters, type PublishedRoute, type RouteConflict } from "../routes/clusters.js";
import { type RouteTableChange, updateRouteTable } from "../routes/route-table-update.js";
import { budgetRefusals } from "../trust/budget-refusals.js";
import {
  type LiveView,
  type RoutesIndex,
  type ServedRoute,
  type SnapshotRoutes,
  snapshotRoutes,
  sourceIdOf,
} from "./served-routes.js";

/**
 * One handle per cluster for the served routes of one build and the updates that follow it: a route kept by an
 * update reads the cluster's newest records through it, so it never pins the view (and the persistent maps'
 * old paths) of the snapshot it was built in; a store changing all day costs the memory of its last version.
 * The handle changes in one place only, updatedSnapshotRoutes, before the routes it returns are used. Name and
 * staleness never change under a handle: a cluster turning stale makes a full build, with new handles.
 */
export function liveViews(views: readonly ClusterView[]): Map<string, LiveView> {
  return new Map(
    views.map((view): [string, LiveView] => [
      view.name,
      {
        current: view,
        name: view.name,
        stale: view.stale,
        get servicesV2() {
          return this.current.servicesV2;
        },
        get services() {
          return this.current.services;
        },
        get routes() {
          return this.current.routes;
        },
      },
    ]),
  );
}

/** Above this share of the routes changed, building whole costs less than updating route by route. */
const MOST_OF_A_BUILD = 0.25;

/** The Services a route's backendRefs and mirrors name (`ns/name`). */
export function servicesOf(route: RouteRecord): Set<string> {
  const names = new Set<string>();
  for (const rule of route.rules) {
    for (const backend of rule.backends) if ("service" in backend) names.add(backend.service);
    for (const mirror of rule.filters.mirrors ?? []) names.add(mirror.service);
  }
  return names;
}

/** The served routes grouped by the published id they came from, and the ids per Service. */
export function indexRoutes(
  bySource: ReadonlyMap<string, readonly ServedRoute[]>,
  conflicts: readonly RouteConflict[],
  live: ReadonlyMap<string, LiveView>,
): RoutesIndex {
  const byService = new Map<string, string[]>();
  for (const [id, served] of bySource) {
    for (const route of served) {
      for (const service of servicesOf(route.route)) {
        const ids = byService.get(service);
        if (!ids) byService.set(service, [id]);
        else if (!ids.includes(id)) ids.push(id);
      }
    }
  }
  const conflictsBySource = new Map<string, RouteConflict[]>();
  for (const conflict of conflicts) {
    const source = bySource.has(conflict.id) ? conflict.id : sourceIdOf(conflict.id);
    const list = conflictsBySource.get(source);
    if (list) list.push(conflict);
    else conflictsBySource.set(source, [conflict]);
  }
  return {
    bySource: PersistentMap.from(bySource),
    byService: PersistentMap.from(byService),
    conflicts: PersistentMap.from(conflictsBySource),
    live,
  };
}

/** One published id's copies in every cluster, merged and served from `views` (as the full build does). */
export function servedOf(
  id: string,
  views: readonly ClusterView[],
  live: ReadonlyMap<string, ClusterView>,
): { routes: ServedRoute[]; conflicts: RouteConflict[] } {
  const published: PublishedRoute[] = [];
  for (const view of views) {
    const route = view.routes.get(id);
    if (route) published.push({ cluster: view.name, route, stale: view.stale });
  }
  const merged = mergeAcrossClusters(published);
  return {
    routes: merged.routes.map(({ route, clusters, failStatic, publishers }) => ({
      route,
      clusters: clusters.flatMap((name) => live.get(name) ?? []),
      failStatic,
      publishers,
    })),
    conflicts: merged.conflicts,
  };
}

/**
 * The routes of `snapshot` from those of an earlier snapshot, without CLUSTER_GRANTS: the route ids and
 * Services whose records differ between the two (found by comparing the persistent maps, lib/persistent-map.ts,
 * at the cost of the difference) are merged again and replace their entries in the table (route-table-update.ts);
 * everything else is kept. Served routes hold their clusters through handles (liveViews) that this moves to
 * the new views; a route kept had no Service it names change, so its memoised selection stays right. Undefined when the snapshots differ in what this cannot follow (clusters added, removed or turned
 * stale, views not built on persistent maps): the caller builds the routes whole.
 */
export function updatedSnapshotRoutes(
  previous: SnapshotRoutes,
  snapshot: Snapshot,
  gateways: ReadonlySet<string> | undefined,
): SnapshotRoutes | undefined {
  const index = previous.index;
  // Built without CLUSTER_GRANTS (only then is there an index); budget refusals are read again below.
  if (!index) return undefined;
  const again = idsToMergeAgain(index, previous.clusters, snapshot.clusters);
  // A difference as large as the routes (a cold read's few hosts, then the whole store): a full build is cheaper.
  if (!again || again.size > MOST_OF_A_BUILD * (index.bySource.size + 64)) return undefined;
  const update = new RoutesUpdate(previous, index);
  for (const id of again) {
    if (!update.replace(id, servedOf(id, snapshot.clusters, index.live))) return undefined;
  }
  return update.routesOf(snapshot, gateways);
}

/**
 * The published ids whose routes or named Services differ between the views before and after, or undefined
 * when the clusters differ in what an update cannot follow (added, removed, renamed, turned stale or fresh,
 * views not built on persistent maps).
 */
function idsToMergeAgain(
  index: RoutesIndex,
  before: readonly ClusterView[],
  after: readonly ClusterView[],
): Set<string> | undefined {
  if (before.length !== after.length) return undefined;
  const again = new Set<string>();
  for (const [position, view] of after.entries()) {
    const old = before[position];
    if (!old || old.name !== view.name || old.stale !== view.stale) return undefined;
    if (old === view) continue;
    const routes = changedKeys(old.routes, view.routes);
    const services = changedKeys(old.servicesV2, view.servicesV2);
    if (!routes || !services) return undefined;
    for (const id of routes) again.add(id);
    for (const service of services) for (const id of index.byService.get(service) ?? []) again.add(id);
  }
  return again;
}

/** The keys whose values differ, when both maps are persistent (lib/persistent-map.ts); else undefined. */
function changedKeys<V>(old: ReadonlyMap<string, V>, next: ReadonlyMap<string, V>): Set<string> | undefined {
  if (!(old instanceof PersistentMap && next instanceof PersistentMap)) return undefined;
  return PersistentMap.changedKeys(old, next);
}

/**
 * The changes one update collects, published id by published id, before it applies them all: to the route
 * tables, to the index by id, by Service and of conflicts, and the conflicts that came and went.
 */
class RoutesUpdate {
  readonly #previous: SnapshotRoutes;
  readonly #index: RoutesIndex;
  readonly #tableChanges: RouteTableChange<ServedRoute>[] = [];
  readonly #sourceChanges: [string, readonly ServedRoute[] | undefined][] = [];
  /** The ids of each Service touched, copied from the index on first touch and edited in place. */
  readonly #serviceIds = new Map<string, string[]>();
  readonly #conflictChanges: [string, readonly RouteConflict[] | undefined][] = [];
  readonly #removed: RouteConflict[] = [];
  readonly #added: RouteConflict[] = [];

  constructor(previous: SnapshotRoutes, index: RoutesIndex) {
    this.#previous = previous;
    this.#index = index;
  }

  /**
   * Replaces the served routes of published id `id` by `next`; false when a new served name is one another
   * id's routes hold (`<id>@<clusters>` equal to a published id): the full build decides then.
   */
  replace(id: string, next: { routes: ServedRoute[]; conflicts: RouteConflict[] }): boolean {
    const old = this.#index.bySource.get(id) ?? [];
    const names = new Set(next.routes.map((served) => served.route.id));
    if (this.#takenElsewhere(names, old)) return false;
    for (const served of old) {
      if (!names.has(served.route.id)) this.#tableChanges.push([served.route.id, undefined]);
      for (const service of servicesOf(served.route)) {
        const ids = this.#idsOf(service);
        const at = ids.indexOf(id);
        if (at >= 0) ids.splice(at, 1);
      }
    }
    for (const served of next.routes) {
      this.#tableChanges.push([served.route.id, served]);
      for (const service of servicesOf(served.route)) {
        const ids = this.#idsOf(service);
        if (!ids.includes(id)) ids.push(id);
      }
    }
    this.#sourceChanges.push([id, next.routes.length > 0 ? next.routes : undefined]);
    this.#removed.push(...(this.#index.conflicts.get(id) ?? []));
    this.#added.push(...next.conflicts);
    this.#conflictChanges.push([id, next.conflicts.length > 0 ? next.conflicts : undefined]);
    return true;
  }

  /**
   * The routes of `snapshot`: both tables updated and the handles moved to its views; undefined when a table
   * cannot be updated (route-table-update.ts), before any handle moved.
   */
  routesOf(snapshot: Snapshot, gateways: ReadonlySet<string> | undefined): SnapshotRoutes | undefined {
    const previous = this.#previous;
    const index = this.#index;
    const table = updateRouteTable(previous.table, this.#tableChanges, gateways);
    if (!table) return undefined;
    const passthrough = updateRouteTable(previous.passthrough, this.#tableChanges, gateways, "passthrough");
    if (!passthrough) return undefined;
    const after = snapshot.clusters;
    for (const view of after) {
      const handle = index.live.get(view.name);
      if (handle) handle.current = view;
    }
    const bySource = index.bySource.withChanges(this.#sourceChanges);
    const conflicts = index.conflicts.withChanges(this.#conflictChanges);
    const serviceChanges = [...this.#serviceIds].map(
      ([service, ids]) => [service, ids.length > 0 ? ids : undefined] as const,
    );
    return snapshotRoutes({
      version: snapshot.version,
      table,
      passthrough,
      conflicts: () => sortedConflicts(conflicts),
      conflictChanges: { since: previous.version, removed: this.#removed, added: this.#added },
      refusals: budgetRefusals(after),
      clusters: after,
      index: {
        bySource,
        byService: index.byService.withChanges(serviceChanges),
        conflicts,
        live: index.live,
      },
      routes: () => sortedRoutes(bySource),
    });
  }

  /** Whether a name of `names` that `old` did not hold is held by another id's routes in either table. */
  #takenElsewhere(names: ReadonlySet<string>, old: readonly ServedRoute[]): boolean {
    const oldNames = new Set(old.map((served) => served.route.id));
    for (const name of names) {
      if (oldNames.has(name)) continue;
      if (this.#previous.table.entries.has(name) || this.#previous.passthrough.entries.has(name)) return true;
    }
    return false;
  }

  #idsOf(service: string): string[] {
    let ids = this.#serviceIds.get(service);
    if (!ids) {
      ids = [...(this.#index.byService.get(service) ?? [])];
      this.#serviceIds.set(service, ids);
    }
    return ids;
  }
}

function sortedRoutes(bySource: PersistentMap<readonly ServedRoute[]>): ServedRoute[] {
  const routes: ServedRoute[] = [];
  for (const served of bySource.values()) for (const route of served) routes.push(route);
  return routes.sort((a, b) => byCodeUnits(a.route.id, b.route.id));
}

function sortedConflicts(bySource: PersistentMap<readonly RouteConflict[]>): RouteConflict[] {
  const conflicts: RouteConflict[] = [];
  for (const list of bySource.values()) conflicts.push(...list);
  return conflicts.sort((a, b) => byCodeUnits(a.id, b.id));
}
