import { renderFamilies } from "../lib/prometheus.js";

/** The sync worker's Prometheus metrics: a handful of counters and gauges, labelled with the cluster. */
const COUNTERS = {
  writes: ["edgeslice_sync_writes_total", "Service records written (put) to the store."],
  deletes: ["edgeslice_sync_deletes_total", "Service records removed from the store."],
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
} as const;

export type CounterName = keyof typeof COUNTERS;
export type GaugeName = keyof typeof GAUGES;

export interface SyncMetrics {
  count(name: CounterName, by?: number): void;
  set(name: GaugeName, value: number): void;
  get(name: CounterName | GaugeName): number;
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
  const values = new Map<string, number>();
  const family = (type: "counter" | "gauge", key: string, [name, help]: readonly [string, string]) => ({
    name,
    type,
    help,
    samples: [{ labels, value: values.get(key) ?? 0 }],
  });
  return {
    count(name, by = 1) {
      values.set(name, (values.get(name) ?? 0) + by);
    },
    set(name, value) {
      values.set(name, value);
    },
    get(name) {
      return values.get(name) ?? 0;
    },
    render() {
      return renderFamilies([
        ...Object.entries(COUNTERS).map(([key, text]) => family("counter", key, text)),
        ...Object.entries(GAUGES).map(([key, text]) => family("gauge", key, text)),
      ]);
    },
  };
}
