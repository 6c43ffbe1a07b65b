import { buildInfoFamily } from "../lib/build-info.js";
import { processMetrics } from "../lib/process-metrics.js";
import { CounterFamily, HistogramFamily, type MetricFamily, renderFamilies } from "../lib/prometheus.js";

/** The sync worker's Prometheus metrics: counters and gauges labelled with the cluster, and a few families. */
const COUNTERS = {
  writes: ["edgeslice_sync_writes_total", "Service records written (put) to the store."],
  deletes: ["edgeslice_sync_deletes_total", "Service records removed from the store."],
  routeWrites: ["edgeslice_sync_route_writes_total", "Route records written (put) to the store."],
  routeDeletes: ["edgeslice_sync_route_deletes_total", "Route records removed from the store."],
  statusWrites: [
    "edgeslice_sync_status_writes_total",
    "Status subresources written (GatewayClass, Gateway, HTTPRoute, Ingress).",
  ],
  statusErrors: [
    "edgeslice_sync_status_errors_total",
    "Status writes that failed after their conflict retries (tried again later).",
  ],
  skippedUnchanged: [
    "edgeslice_sync_writes_skipped_unchanged_total",
    "Recomputed records equal to the stored one.",
  ],
  writeErrors: [
    "edgeslice_sync_write_errors_total",
    "Store writes or loads that failed (retried with backoff).",
  ],
  events: ["edgeslice_sync_events_total", "Service and EndpointSlice events that marked a Service dirty."],
  debounceFlushes: ["edgeslice_sync_debounce_flushes_total", "Batches of dirty Services reconciled."],
  fullResyncs: ["edgeslice_sync_full_resyncs_total", "Whole-cache comparisons with the store."],
  valveHolds: [
    "edgeslice_sync_valve_holds_total",
    "Changes held by the safety valve (mass endpoint removal).",
  ],
  invalidServices: ["edgeslice_sync_invalid_services_total", "Services skipped for malformed annotations."],
  missingKinds: [
    "edgeslice_sync_missing_kinds_total",
    "Lists answered 404 (a kind whose CRD is not installed, e.g. the Gateway API): retried slowly.",
  ],
  informerRestarts: [
    "edgeslice_sync_informer_restarts_total",
    "Informer restarts after a watch or list error.",
  ],
  heartbeatErrors: ["edgeslice_sync_heartbeat_errors_total", "Heartbeats that failed to reach the store."],
  storeLosses: [
    "edgeslice_sync_store_losses_total",
    "Times the store was found without this cluster's heartbeat record between beats (then re-pushed).",
  ],
} as const;

const GAUGES = {
  synced: ["edgeslice_sync_synced", "1 once the informers completed their first full list."],
  leader: ["edgeslice_sync_leader", "1 while this replica holds the lease and writes."],
  redisUp: ["edgeslice_sync_redis_up", "1 while the Redis connection is ready."],
  lastHeartbeat: [
    "edgeslice_sync_last_heartbeat_timestamp_seconds",
    "Unix time of the last successful heartbeat.",
  ],
  dirtyServices: ["edgeslice_sync_dirty_services", "Services waiting to be reconciled."],
  apiserverReachable: [
    "edgeslice_sync_apiserver_reachable",
    "1 while the Kubernetes API server answers this replica; 0 while it serves its last known state.",
  ],
  apiserverUnreachableSince: [
    "edgeslice_sync_apiserver_unreachable_since_timestamp_seconds",
    "Unix time since which the API server has not answered; 0 while it answers.",
  ],
  lastPublish: [
    "edgeslice_sync_last_publish_timestamp_seconds",
    "Unix time of the last Service record written to or removed from the store.",
  ],
  fenceHeld: ["edgeslice_sync_writer_fence_held", "1 while this replica holds the store's writer fence."],
  routes: [
    "edgeslice_sync_routes",
    "Route records the cluster publishes (annotations, HTTPRoutes, Ingresses).",
  ],
  routeConflicts: [
    "edgeslice_sync_route_conflicts",
    "Routes that ask for the same host and request as an older route of the cluster, which is served instead.",
  ],
  hostClaimsRefused: [
    "edgeslice_sync_host_claims_refused",
    "Hostnames of routes that HOST_CLAIMS does not let their namespace claim (left out).",
  ],
  informersRefused: [
    "edgeslice_sync_informers_refused",
    "Informers the API server has refused (401/403) for longer than the report bound: an RBAC problem.",
  ],
} as const;

/** Event-to-published latency buckets, seconds: a debounce (50-100 ms) up to a held or retried write. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type CounterName = keyof typeof COUNTERS;
export type GaugeName = keyof typeof GAUGES;

export interface SyncMetrics {
  count(name: CounterName, by?: number): void;
  set(name: GaugeName, value: number): void;
  get(name: CounterName | GaugeName): number;
  /** A Service record written or removed `ms` after the watch event that caused it was received. */
  published(ms: number | undefined, at: number): void;
  /** A LIST after the first one, by resource and reason (410 Gone: `expired`). */
  relisted(resource: string, reason: string): void;
  /** A watch resumed or restarted, by resource and reason (`timeout`, `stalled`, `failed`, ...). */
  watchRestarted(resource: string, reason: string): void;
  /** Labelled counts for tests: relists or watch restarts of `resource` for `reason`. */
  countOf(family: "relists" | "watchRestarts", resource: string, reason: string): number;
  /** Runs before every render: the place to copy values that live elsewhere into gauges. */
  beforeRender(collect: () => void): void;
  /** The text exposition, served at /metrics. */
  render(): string;
}

/**
 * @example
 * const metrics = createSyncMetrics({ cluster: config.cluster });
 * metrics.count("writes");
 * metrics.set("leader", 1);
 * response.end(metrics.render());
 */
export function createSyncMetrics(labels: Readonly<Record<string, string>> = {}): SyncMetrics {
  return new SyncMetricsRegistry(labels);
}

/**
 * The sync's metrics: the counters and gauges by name, the event-to-published histogram and the relist and
 * watch-restart counters by resource and reason, every series carrying `labels`.
 */
export class SyncMetricsRegistry implements SyncMetrics {
  readonly #labels: Readonly<Record<string, string>>;
  readonly #labelValues: readonly string[];
  /** Counters and gauges by name. */
  readonly #values = new Map<string, number>();
  readonly #latency: HistogramFamily;
  readonly #relists: CounterFamily;
  readonly #watchRestarts: CounterFamily;
  /** Run before every render. */
  readonly #collectors: (() => void)[] = [];

  constructor(labels: Readonly<Record<string, string>> = {}) {
    this.#labels = labels;
    const labelNames = Object.keys(labels);
    this.#labelValues = Object.values(labels);
    this.#latency = new HistogramFamily(
      "edgeslice_sync_event_to_published_seconds",
      "From a watch event's arrival to the Service record it changed written to the store.",
      labelNames,
      LATENCY_BUCKETS,
    );
    this.#relists = new CounterFamily(
      "edgeslice_sync_relists_total",
      "LISTs after the first, by resource and reason (expired: 410 Gone).",
      [...labelNames, "resource", "reason"],
    );
    this.#watchRestarts = new CounterFamily(
      "edgeslice_sync_watch_restarts_total",
      "Watches resumed or restarted, by resource and reason (timeout: the server ended it, as it ends every watch).",
      [...labelNames, "resource", "reason"],
    );
  }

  count(name: CounterName, by = 1): void {
    this.#values.set(name, (this.#values.get(name) ?? 0) + by);
  }

  set(name: GaugeName, value: number): void {
    this.#values.set(name, value);
  }

  get(name: CounterName | GaugeName): number {
    return this.#values.get(name) ?? 0;
  }

  published(ms: number | undefined, at: number): void {
    this.#values.set("lastPublish", Math.floor(at / 1000));
    if (ms !== undefined) this.#latency.child(...this.#labelValues).observe(Math.max(0, ms) / 1000);
  }

  relisted(resource: string, reason: string): void {
    this.#relists.child(...this.#labelValues, resource, reason).inc();
  }

  watchRestarted(resource: string, reason: string): void {
    this.#watchRestarts.child(...this.#labelValues, resource, reason).inc();
  }

  countOf(which: "relists" | "watchRestarts", resource: string, reason: string): number {
    const family = which === "relists" ? this.#relists : this.#watchRestarts;
    return family.child(...this.#labelValues, resource, reason).value;
  }

  beforeRender(collect: () => void): void {
    this.#collectors.push(collect);
  }

  render(): string {
    for (const collect of this.#collectors) collect();
    const families: MetricFamily[] = [
      buildInfoFamily(),
      ...Object.entries(COUNTERS).map(([key, text]) => this.#family("counter", key, text)),
      ...Object.entries(GAUGES).map(([key, text]) => this.#family("gauge", key, text)),
      this.#latency.family(),
      this.#relists.family(),
      this.#watchRestarts.family(),
      // The process's own series (memory, CPU, event loop, GC), read now; nothing runs per event.
      ...processMetrics().families(),
    ];
    return renderFamilies(families);
  }

  #family(type: "counter" | "gauge", key: string, [name, help]: readonly [string, string]): MetricFamily {
    return { name, type, help, samples: [{ labels: this.#labels, value: this.#values.get(key) ?? 0 }] };
  }
}
