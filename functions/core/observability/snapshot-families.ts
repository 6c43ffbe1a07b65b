import type { MetricFamily } from "../../../lib/prometheus.js";
import type { BudgetReport } from "../../../store/record-budget.js";
import type { ServiceBackends } from "../selection/backend-states.js";
import type { BackendSeries } from "./backend-metrics.js";

/**
 * The families a scrape computes from the snapshot in use (metrics.ts renders them after the process's
 * counters): whether one is loaded and how old, the store's connection, and each cluster's staleness, expiry
 * and budget.
 */

/**
 * What a scrape computes from the snapshot and the ejection state; each part is optional, and a scrape renders
 * what it is given.
 */
export interface ScrapeViews {
  /** backend-states.ts: backends by service, cluster, family and state, cluster by cluster. */
  readonly backends?: Iterable<ServiceBackends>;
  /** METRICS_BACKENDS: the cardinality of edgeslice_backends; default "service". */
  readonly backendSeries?: BackendSeries;
  /** Each cluster of the snapshot, whether its lease ran out, and what its budget holds and refused. */
  readonly clusters?: readonly ScrapedCluster[];
  /** Route ids clusters publish with different definitions (snapshot-routes.ts). */
  readonly routeConflicts?: number;
}

export interface ScrapedCluster {
  readonly name: string;
  readonly stale: boolean;
  readonly expired?: boolean;
  readonly budget?: BudgetReport | undefined;
}

export interface SnapshotGauges {
  readonly loaded: boolean;
  readonly version: number;
  /** Seconds since this router first saw the current snapshot version. */
  readonly ageSeconds: number;
  readonly clusters: number;
  readonly staleClusters: number;
  /** Whether the store answered on its last use; undefined for a source that cannot lose it. */
  readonly storeConnected: boolean | undefined;
}

/** One unlabelled sample. */
export const one = (value: number) => [{ value }];

/** The snapshot in use: loaded, its version and age, the store's connection, its clusters by staleness. */
export function snapshotFamilies(s: SnapshotGauges): MetricFamily[] {
  const families: MetricFamily[] = [
    {
      name: "edgeslice_snapshot_loaded",
      type: "gauge",
      help: "1 when a store snapshot was ever loaded.",
      samples: one(s.loaded ? 1 : 0),
    },
    {
      name: "edgeslice_snapshot_version",
      type: "gauge",
      help: "Version of the snapshot in use.",
      samples: one(s.version),
    },
    {
      name: "edgeslice_snapshot_age_seconds",
      type: "gauge",
      help: "Seconds since the snapshot in use was first seen.",
      samples: one(s.ageSeconds),
    },
  ];
  if (s.storeConnected !== undefined) {
    families.push({
      name: "edgeslice_store_connected",
      type: "gauge",
      help: "1 while the store answers; 0 means serving last known.",
      samples: one(s.storeConnected ? 1 : 0),
    });
  }
  families.push({
    name: "edgeslice_clusters",
    type: "gauge",
    help: "Clusters in the snapshot by staleness.",
    samples: [
      { labels: { stale: "false" }, value: s.clusters - s.staleClusters },
      { labels: { stale: "true" }, value: s.staleClusters },
    ],
  });
  return families;
}

/** Each cluster's staleness and expiry (when the scrape lists clusters), and the routes they disagree on. */
export function clusterFamilies(views: ScrapeViews): MetricFamily[] {
  const families: MetricFamily[] = [];
  const { clusters } = views;
  if (clusters) {
    families.push({
      name: "edgeslice_cluster_stale",
      type: "gauge",
      help: "1 while the cluster's lease has run out (its sync went quiet), 0 while fresh.",
      samples: clusters.map((c) => ({ labels: { cluster: c.name }, value: c.stale ? 1 : 0 })),
    });
    families.push({
      name: "edgeslice_cluster_expired",
      type: "gauge",
      help: "1 while the cluster has been stale longer than FAIL_STATIC_MAX_MS and serves nothing.",
      samples: clusters.map((c) => ({ labels: { cluster: c.name }, value: c.expired ? 1 : 0 })),
    });
  }
  if (views.routeConflicts !== undefined) {
    families.push({
      name: "edgeslice_route_conflicts",
      type: "gauge",
      help: "Routes that clusters publish with different definitions; each serves the definition most publish.",
      samples: one(views.routeConflicts),
    });
  }
  return families;
}

/** What the reader holds of each cluster within its budget (store/record-budget.ts), where it counts. */
export function heldFamilies(clusters: readonly ScrapedCluster[]): MetricFamily[] {
  const counted = clusters.filter((cluster) => cluster.budget !== undefined);
  if (counted.length === 0) return [];
  const samples = (value: (budget: BudgetReport) => number) =>
    counted.map((cluster) => ({
      labels: { cluster: cluster.name },
      value: cluster.budget ? value(cluster.budget) : 0,
    }));
  return [
    {
      name: "edgeslice_cluster_held_bytes",
      type: "gauge",
      help: "Serialized bytes of a cluster's service and route records the router holds (CLUSTER_MAX_BYTES bounds it).",
      samples: samples((budget) => budget.bytes),
    },
    {
      name: "edgeslice_cluster_held_records",
      type: "gauge",
      help: "A cluster's service and route records the router holds (CLUSTER_MAX_RECORDS bounds it).",
      samples: samples((budget) => budget.records),
    },
    {
      name: "edgeslice_cluster_refused_records",
      type: "gauge",
      help: "A cluster's records the router refuses now: over RECORD_MAX_BYTES, past its budget, or unread.",
      samples: samples((budget) => budget.refusedCount),
    },
  ];
}
