import { PersistentMap } from "../../lib/persistent-map.js";
import type { RouteRecord } from "../../store/routes.js";
import type { ClusterView, Snapshot } from "../../store/store.js";
import { budgetRefusals } from "./budget-refusals.js";
import { mergeAcrossClusters, type PublishedRoute, type RouteConflict } from "./routes/clusters.js";
import { type RouteTableChange, updateRouteTable } from "./routes/route-table-update.js";
import type { ConflictChanges, LiveView, RoutesIndex, ServedRoute, SnapshotRoutes } from "./served-routes.js";

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
  const before = previous.clusters;
  const after = snapshot.clusters;
  if (before.length !== after.length) return undefined;
  const again = new Set<string>();
  for (const [position, view] of after.entries()) {
    const old = before[position];
    if (!old || old.name !== view.name || old.stale !== view.stale) return undefined;
    if (old === view) continue;
    if (!(old.routes instanceof PersistentMap && view.routes instanceof PersistentMap)) return undefined;
    if (!(old.servicesV2 instanceof PersistentMap && view.servicesV2 instanceof PersistentMap))
      return undefined;
    for (const id of PersistentMap.changedKeys(old.routes, view.routes)) again.add(id);
    for (const service of PersistentMap.changedKeys(old.servicesV2, view.servicesV2)) {
      for (const id of index.byService.get(service) ?? []) again.add(id);
    }
  }
  // A difference as large as the routes (a cold read's few hosts, then the whole store): a full build is cheaper.
  if (again.size > MOST_OF_A_BUILD * (index.bySource.size + 64)) return undefined;
  const tableChanges: RouteTableChange<ServedRoute>[] = [];
  const sourceChanges: [string, readonly ServedRoute[] | undefined][] = [];
  const serviceIds = new Map<string, string[]>();
  const serviceIdsOf = (service: string) => {
    let ids = serviceIds.get(service);
    if (!ids) {
      ids = [...(index.byService.get(service) ?? [])];
      serviceIds.set(service, ids);
    }
    return ids;
  };
  const conflictChanges: [string, readonly RouteConflict[] | undefined][] = [];
  const removed: RouteConflict[] = [];
  const added: RouteConflict[] = [];
  for (const id of again) {
    const old = index.bySource.get(id) ?? [];
    const next = servedOf(id, after, index.live);
    const names = new Set(next.routes.map((served) => served.route.id));
    const oldNames = new Set(old.map((served) => served.route.id));
    // A name another id's routes hold (`<id>@<clusters>` equal to a published id): the full build decides.
    for (const name of names) {
      if (oldNames.has(name)) continue;
      if (previous.table.entries.has(name) || previous.passthrough.entries.has(name)) return undefined;
    }
    for (const served of old) {
      if (!names.has(served.route.id)) tableChanges.push([served.route.id, undefined]);
      for (const service of servicesOf(served.route)) {
        const ids = serviceIdsOf(service);
        const at = ids.indexOf(id);
        if (at >= 0) ids.splice(at, 1);
      }
    }
    for (const served of next.routes) {
      tableChanges.push([served.route.id, served]);
      for (const service of servicesOf(served.route)) {
        const ids = serviceIdsOf(service);
        if (!ids.includes(id)) ids.push(id);
      }
    }
    sourceChanges.push([id, next.routes.length > 0 ? next.routes : undefined]);
    removed.push(...(index.conflicts.get(id) ?? []));
    added.push(...next.conflicts);
    conflictChanges.push([id, next.conflicts.length > 0 ? next.conflicts : undefined]);
  }
  const table = updateRouteTable(previous.table, tableChanges, gateways);
  if (!table) return undefined;
  const passthrough = updateRouteTable(previous.passthrough, tableChanges, gateways, "passthrough");
  if (!passthrough) return undefined;
  for (const view of after) {
    const handle = index.live.get(view.name);
    if (handle) handle.current = view;
  }
  const bySource = index.bySource.withChanges(sourceChanges);
  const conflicts = index.conflicts.withChanges(conflictChanges);
  return snapshotRoutes({
    version: snapshot.version,
    table,
    passthrough,
    conflicts: () => sortedConflicts(conflicts),
    conflictChanges: { since: previous.version, removed, added },
    refusals: budgetRefusals(after),
    clusters: after,
    index: {
      bySource,
      byService: index.byService.withChanges(
        [...serviceIds].map(([service, ids]) => [service, ids.length > 0 ? ids : undefined] as const),
      ),
      conflicts,
      live: index.live,
    },
    routes: () => sortedRoutes(bySource),
  });
}

/**
 * The published id a served route's id stands for when it is not a published id itself: `<id>@<clusters>` of
 * definitions served apart (routes/clusters.ts). Kubernetes names hold no `@`.
 */
export function sourceIdOf(servedId: string): string {
  const at = servedId.lastIndexOf("@");
  return at < 0 ? servedId : servedId.slice(0, at);
}

function sortedRoutes(bySource: PersistentMap<readonly ServedRoute[]>): ServedRoute[] {
  const routes: ServedRoute[] = [];
  for (const served of bySource.values()) for (const route of served) routes.push(route);
  return routes.sort((a, b) => (a.route.id < b.route.id ? -1 : a.route.id > b.route.id ? 1 : 0));
}

function sortedConflicts(bySource: PersistentMap<readonly RouteConflict[]>): RouteConflict[] {
  const conflicts: RouteConflict[] = [];
  for (const list of bySource.values()) conflicts.push(...list);
  return conflicts.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * SnapshotRoutes whose sorted lists of routes and conflicts are made when first read (admin pages and metrics
 * read them; routing never, and the reports follow conflictChanges).
 */
export function snapshotRoutes(
  fields: Omit<SnapshotRoutes, "routes" | "conflicts"> & {
    readonly routes: () => readonly ServedRoute[];
    readonly conflicts: () => readonly RouteConflict[];
  },
): SnapshotRoutes {
  let routes: readonly ServedRoute[] | undefined;
  let conflicts: readonly RouteConflict[] | undefined;
  const { routes: listRoutes, conflicts: listConflicts, ...rest } = fields;
  return {
    ...rest,
    get routes() {
      routes ??= listRoutes();
      return routes;
    },
    get conflicts() {
      conflicts ??= listConflicts();
      return conflicts;
    },
  };
}
