import { buildInfoFamily } from "../../lib/build-info.js";
import { expositionStream } from "../../lib/exposition-slices.js";
import { type MetricFamily, PROMETHEUS_CONTENT_TYPE } from "../../lib/prometheus.js";
import type { Snapshot, SnapshotSource } from "../../store/store.js";
import type { BackendSeries } from "../core/observability/backend-metrics.js";
import type { RouterMetrics } from "../core/observability/metrics.js";
import { eachServiceBackends } from "../core/selection/backend-states.js";
import type { Balancer } from "../core/selection/balancer.js";
import type { PassiveEjection } from "../core/selection/ejection.js";
import type { SnapshotRoutes } from "../core/snapshot/served-routes.js";

export interface MetricsEndpointDeps {
  readonly source: SnapshotSource;
  readonly routesOf: (snapshot: Snapshot) => SnapshotRoutes;
  readonly balancer: Balancer;
  readonly ejection: PassiveEjection;
  readonly metrics: RouterMetrics;
  readonly snapshotAgeSeconds: (snapshot: Snapshot) => number;
  /** METRICS_BACKENDS. */
  readonly backendSeries: BackendSeries;
  /** A turn of the runtime's event loop between slices of the body (lib/exposition-slices.ts). */
  readonly yieldToLoop: () => Promise<void>;
  /** The runtime's process series, read at scrape time (Node: lib/process-metrics.ts); Workers have none. */
  readonly processFamilies?: () => Iterable<MetricFamily>;
  /** Clusters stale past FAIL_STATIC_MAX_MS, serving nothing (core/trust/fail-static-bound.ts). */
  readonly expired?: () => ReadonlyMap<string, unknown>;
}

/**
 * `/_edgeslice/metrics`: the exposition streamed in slices with a turn of the event loop between them, so a
 * scrape of a large store never stalls the requests the router proxies meanwhile. The snapshot is the one of
 * the scrape's start (snapshots are immutable); counters are read as the slices reach them.
 */
export async function metricsResponse(deps: MetricsEndpointDeps): Promise<Response> {
  const snapshot = await deps.source.current();
  const { ejection } = deps;
  // Nothing ejected (the usual case): no endpoint's address is built to ask.
  const ejected = ejection.ejectedCount();
  const isEjected = ejected > 0 ? (address: string) => ejection.isEjected(address) : undefined;
  const routerFamilies = deps.metrics.families({
    backends: eachServiceBackends(snapshot, isEjected),
    backendSeries: deps.backendSeries,
    clusters: (snapshot?.clusters ?? []).map((cluster) => ({
      name: cluster.name,
      stale: cluster.stale,
      expired: deps.expired?.().has(cluster.name) === true,
      budget: cluster.budget,
    })),
    routeConflicts: snapshot ? deps.routesOf(snapshot).conflicts.length : 0,
    inFlight: deps.balancer.totalInFlight(),
    ejected,
    snapshot: {
      loaded: snapshot !== undefined,
      version: snapshot?.version ?? 0,
      ageSeconds: snapshot ? deps.snapshotAgeSeconds(snapshot) : 0,
      clusters: snapshot?.clusters.length ?? 0,
      staleClusters: snapshot?.clusters.filter((cluster) => cluster.stale).length ?? 0,
      storeConnected: deps.source.status?.().connected,
    },
  });
  const processFamilies = deps.processFamilies;
  const families = (function* () {
    yield buildInfoFamily();
    if (processFamilies) yield* processFamilies();
    yield* routerFamilies;
  })();
  return new Response(expositionStream(families, { yieldToLoop: deps.yieldToLoop }), {
    status: 200,
    headers: { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" },
  });
}
