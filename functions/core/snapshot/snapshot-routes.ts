import type { ClusterView, Snapshot } from "../../../store/store.js";
import { type MayShadow, mergeAcrossClusters, type PublishedRoute } from "../routes/clusters.js";
import { buildRouteTable } from "../routes/route-table.js";
import { budgetRefusals } from "../trust/budget-refusals.js";
import type { ClusterGrants } from "../trust/cluster-grants.js";
import { applyClusterGrants, everyClusterGranted } from "../trust/granted-clusters.js";
import { type ServedRoute, type SnapshotRoutes, snapshotRoutes, sourceIdOf } from "./served-routes.js";
import { indexRoutes, liveViews, updatedSnapshotRoutes } from "./snapshot-routes-update.js";

export type { RoutePublisher } from "../routes/clusters.js";

/** The memo key of a router without CLUSTER_GRANTS. */
const UNGRANTED: ClusterGrants = new Map();
/** The memo key of a router without GATEWAYS. */
const EVERY_GATEWAY: ReadonlySet<string> = new Set();
const built = new WeakMap<ClusterGrants, WeakMap<ReadonlySet<string>, WeakMap<Snapshot, SnapshotRoutes>>>();
/** The routes last built per grants and gateways: a newer snapshot's are updated from them. */
const latest = new WeakMap<ClusterGrants, WeakMap<ReadonlySet<string>, { routes: SnapshotRoutes }>>();

/**
 * Memoised on the snapshot's identity (and the grants' and gateways'): a snapshot is immutable and replaced
 * on any change. A snapshot not seen yet gets the routes last built updated by what differs between the two
 * (snapshot-routes-update.ts, docs/design.md "Cost per change"), or built whole when they cannot be. `gateways`:
 * GATEWAYS, the Gateways this router implements; undefined, all of them.
 */
export function snapshotRoutesOf(
  snapshot: Snapshot,
  grants?: ClusterGrants,
  gateways?: ReadonlySet<string>,
): SnapshotRoutes {
  const byGateways = memo(built, grants ?? UNGRANTED);
  const bySnapshot = memo(byGateways, gateways ?? EVERY_GATEWAY);
  let routes = bySnapshot.get(snapshot);
  if (!routes) {
    const last = memo(latest, grants ?? UNGRANTED).get(gateways ?? EVERY_GATEWAY);
    routes =
      (grants === undefined && last && updatedSnapshotRoutes(last.routes, snapshot, gateways)) ||
      buildSnapshotRoutes(snapshot, grants, gateways);
    bySnapshot.set(snapshot, routes);
    memo(latest, grants ?? UNGRANTED).set(gateways ?? EVERY_GATEWAY, { routes });
  }
  return routes;
}

function memo<K extends object, V extends object>(
  map: WeakMap<K, WeakMap<object, V>>,
  key: K,
): WeakMap<object, V> {
  let inner = map.get(key);
  if (!inner) {
    inner = new WeakMap();
    map.set(key, inner);
  }
  return inner;
}

/**
 * CLUSTER_GRANTS first (granted-clusters.ts): a cluster's routes for hosts it was not granted, and its
 * endpoints outside its networks, are left out before anything else looks at them. Then stale clusters are
 * dropped per route (docs/design.md "Store", fail static): a route's copies in fresh clusters serve; when every
 * cluster that publishes it is stale, theirs serve, so a route whose only clusters went quiet keeps its last
 * known backends. The serving copies are merged across clusters (routes/clusters.ts), then matched by the
 * Gateway API's precedence (routes/route-table.ts), over the listeners of `gateways` only.
 */
export function buildSnapshotRoutes(
  snapshot: Snapshot,
  grants?: ClusterGrants,
  gateways?: ReadonlySet<string>,
): SnapshotRoutes {
  const granted = applyClusterGrants(snapshot.clusters, grants);
  const views = new Map<string, ClusterView>();
  const published: PublishedRoute[] = [];
  for (const view of granted.clusters) {
    views.set(view.name, view);
    for (const route of view.routes.values())
      published.push({ cluster: view.name, route, stale: view.stale });
  }
  const mayShadow: MayShadow | undefined = grants
    ? (clusters, route) => everyClusterGranted(grants, clusters, route)
    : undefined;
  const merged = mergeAcrossClusters(published, mayShadow);
  // Without grants, routes hold their clusters through handles the next updates move (snapshot-routes-update.ts).
  const live = grants === undefined ? liveViews(granted.clusters) : undefined;
  const routes: ServedRoute[] = [];
  const bySource = new Map<string, ServedRoute[]>();
  const publishedIds = new Set(published.map((copy) => copy.route.id));
  for (const { route, clusters, failStatic, publishers } of merged.routes) {
    const source = publishedIds.has(route.id) ? route.id : sourceIdOf(route.id);
    const served = {
      route,
      clusters: clusters.flatMap((name) => live?.get(name) ?? views.get(name) ?? []),
      failStatic,
      publishers,
    };
    routes.push(served);
    const group = bySource.get(source);
    if (group) group.push(served);
    else bySource.set(source, [served]);
  }
  return snapshotRoutes({
    version: snapshot.version,
    routes: () => routes,
    table: buildRouteTable(routes, gateways),
    passthrough: buildRouteTable(routes, gateways, "passthrough"),
    conflicts: () => merged.conflicts,
    refusals: [...granted.refusals, ...budgetRefusals(snapshot.clusters)],
    clusters: granted.clusters,
    index: live ? indexRoutes(bySource, merged.conflicts, live) : undefined,
  });
}
