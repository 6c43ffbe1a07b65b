import type { PersistentMap } from "../../../lib/persistent-map.js";
import type { ClusterView } from "../../../store/store.js";
import type { MergedRoute, RouteConflict } from "../routes/clusters.js";
import type { RouteTable } from "../routes/route-table.js";
import type { GrantRefusal } from "../trust/granted-clusters.js";

/**
 * A merged route (routes/clusters.ts) as the router serves it: its clusters as the views its rules' backends
 * resolve against.
 */
export interface ServedRoute extends Omit<MergedRoute, "clusters"> {
  /** The clusters traffic may go to, sorted: the serving publishers of the served definition. */
  readonly clusters: readonly ClusterView[];
}

/** Everything a router derives from one snapshot to route requests; built once per snapshot. */
export interface SnapshotRoutes {
  readonly version: number;
  /** Sorted by id. */
  readonly routes: readonly ServedRoute[];
  /** The HTTP routes (every source but `tlsroute`). */
  readonly table: RouteTable<ServedRoute>;
  /** The TLSRoutes, matched by a TLS connection's server name (routes/passthrough.ts); Node reads it. */
  readonly passthrough: RouteTable<ServedRoute>;
  /** Clusters that publish one id with different definitions (only the served one is used). */
  readonly conflicts: readonly RouteConflict[];
  /** What CLUSTER_GRANTS refused (granted-clusters.ts); empty without grants. */
  readonly refusals: readonly GrantRefusal[];
  /** The snapshot's clusters as served: without what CLUSTER_GRANTS refused. */
  readonly clusters: readonly ClusterView[];
  /** What the next snapshot's routes are updated from (snapshot-routes-update.ts); absent under CLUSTER_GRANTS. */
  readonly index?: RoutesIndex | undefined;
  /** Set when updated from the routes of an earlier snapshot: how the conflicts differ from theirs. */
  readonly conflictChanges?: ConflictChanges | undefined;
}

/**
 * What an update of a snapshot's routes starts from, besides the table: the served routes of each published
 * route id (one, or several `<id>@<clusters>` when definitions are served apart), and the ids whose rules or
 * mirrors name each Service (in any cluster), so a changed service record finds the routes that resolve it.
 */
export interface RoutesIndex {
  readonly bySource: PersistentMap<readonly ServedRoute[]>;
  readonly byService: PersistentMap<readonly string[]>;
  /** The conflicts of each published id that has any. */
  readonly conflicts: PersistentMap<readonly RouteConflict[]>;
  /** The cluster handles served routes hold (liveViews), by name. */
  readonly live: ReadonlyMap<string, LiveView>;
}

/** A cluster as served routes hold it: a handle the update points at each new view of the cluster. */
export interface LiveView extends ClusterView {
  current: ClusterView;
}

/** The conflicts that differ from those of the routes of version `since` (snapshot-reports.ts logs them). */
export interface ConflictChanges {
  readonly since: number;
  readonly removed: readonly RouteConflict[];
  readonly added: readonly RouteConflict[];
}

/**
 * The published id a served route's id stands for when it is not a published id itself: `<id>@<clusters>` of
 * definitions served apart (routes/clusters.ts). Kubernetes names hold no `@`.
 */
export function sourceIdOf(servedId: string): string {
  const at = servedId.lastIndexOf("@");
  return at < 0 ? servedId : servedId.slice(0, at);
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
