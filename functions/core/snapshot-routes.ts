import type { RouteRecord } from "../../store/routes.js";
import type { ClusterView, Snapshot } from "../../store/store.js";
import { mergeAcrossClusters, type PublishedRoute, type RouteConflict } from "./routes/clusters.js";
import { buildRouteTable, type RouteTable } from "./routes/route-table.js";

/** One cluster that publishes a route id, and whether its copy is the one served. */
export interface RoutePublisher {
  readonly cluster: string;
  readonly stale: boolean;
  /** Traffic of this route may go to this cluster's backends. */
  readonly serving: boolean;
}

/** A route as the router serves it, with the clusters whose backends its rules resolve against. */
export interface ServedRoute {
  readonly route: RouteRecord;
  /** The clusters traffic may go to, sorted: the serving publishers of the served definition. */
  readonly clusters: readonly ClusterView[];
  /** Every publisher of this id is stale, and their last known backends are served anyway. */
  readonly failStatic: boolean;
  /** Every cluster that publishes this id, stale or not, sorted. */
  readonly publishers: readonly RoutePublisher[];
}

/** Everything a router derives from one snapshot to route requests; built once per snapshot. */
export interface SnapshotRoutes {
  readonly version: number;
  /** Sorted by id. */
  readonly routes: readonly ServedRoute[];
  readonly table: RouteTable<ServedRoute>;
  /** Clusters that publish one id with different definitions (only the served one is used). */
  readonly conflicts: readonly RouteConflict[];
}

const built = new WeakMap<Snapshot, SnapshotRoutes>();

/** Memoised on the snapshot's identity: a snapshot is immutable and replaced on any change. */
export function snapshotRoutesOf(snapshot: Snapshot): SnapshotRoutes {
  let routes = built.get(snapshot);
  if (!routes) {
    routes = buildSnapshotRoutes(snapshot);
    built.set(snapshot, routes);
  }
  return routes;
}

/**
 * Stale clusters are dropped per route (DESIGN.md "Store", fail static): a route's copies in fresh clusters
 * serve; when every cluster that publishes it is stale, theirs serve, so a route whose only clusters went
 * quiet keeps its last known backends. The serving copies are merged across clusters (routes/clusters.ts),
 * then matched by the Gateway API's precedence (routes/route-table.ts).
 */
export function buildSnapshotRoutes(snapshot: Snapshot): SnapshotRoutes {
  const byId = new Map<string, { view: ClusterView; route: RouteRecord }[]>();
  const views = new Map<string, ClusterView>();
  for (const view of snapshot.clusters) {
    views.set(view.name, view);
    for (const route of view.routes.values()) {
      const copies = byId.get(route.id);
      if (copies) copies.push({ view, route });
      else byId.set(route.id, [{ view, route }]);
    }
  }
  const serving: PublishedRoute[] = [];
  const failStatic = new Set<string>();
  for (const [id, copies] of byId) {
    const fresh = copies.filter((copy) => !copy.view.stale);
    if (fresh.length === 0) failStatic.add(id);
    for (const copy of fresh.length > 0 ? fresh : copies) {
      serving.push({ cluster: copy.view.name, route: copy.route });
    }
  }
  const merged = mergeAcrossClusters(serving);
  const routes: ServedRoute[] = merged.routes.map(({ route, clusters }) => {
    const publishers = (byId.get(route.id) ?? [])
      .map(({ view }) => ({ cluster: view.name, stale: view.stale, serving: clusters.includes(view.name) }))
      .sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
    return {
      route,
      clusters: clusters.flatMap((name) => views.get(name) ?? []),
      failStatic: failStatic.has(route.id),
      publishers,
    };
  });
  return {
    version: snapshot.version,
    routes,
    table: buildRouteTable(routes),
    conflicts: merged.conflicts,
  };
}
