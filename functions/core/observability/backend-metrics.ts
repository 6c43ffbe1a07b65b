import { byCodeUnits } from "../../../lib/code-unit-order.js";
import type { IpFamily } from "../../../lib/ip.js";
import { escapeLabelValue, type MetricFamily, PAUSE, type Sample } from "../../../lib/prometheus.js";
import { BACKEND_STATES, type BackendState, type ServiceBackends } from "../selection/backend-states.js";

/**
 * `edgeslice_backends` at the cardinality the operator chose (METRICS_BACKENDS), like Envoy's stats matchers or
 * Traefik's per-service switches: a series per state of every (Service, cluster, family) grows with the store
 * (200,000 series at 10 clusters of 5,000 Services), so a large fleet may keep one per (cluster, family) or none.
 * The metric keeps its name either way, so `sum by (cluster, state) (edgeslice_backends)` reads the same.
 */
export const BACKEND_SERIES = ["service", "cluster", "none"] as const;
export type BackendSeries = (typeof BACKEND_SERIES)[number];

const NAME = "edgeslice_backends";
const HELP =
  "Endpoints the store lists by service (unless METRICS_BACKENDS=cluster), cluster, family and state (ready, fallback, draining, ejected).";

/** The family for `rows` (eachServiceBackends, cluster by cluster), or undefined with `none`. */
export function backendFamily(
  rows: Iterable<ServiceBackends>,
  series: BackendSeries,
): MetricFamily | undefined {
  if (series === "none") return undefined;
  const samples = series === "service" ? () => perService(rows) : () => perCluster(rows);
  return { name: NAME, type: "gauge", help: HELP, samples: { [Symbol.iterator]: samples } };
}

function* perService(rows: Iterable<ServiceBackends>): Generator<Sample> {
  for (const row of rows) {
    const prefix = `{service="${escapeLabelValue(row.service)}",cluster="${escapeLabelValue(row.cluster)}",family="${row.family}",state="`;
    for (const state of BACKEND_STATES) yield { labelText: `${prefix}${state}"}`, value: row.counts[state] };
  }
}

type Counts = Record<BackendState, number>;

/** Sums per (cluster, family); a PAUSE per row, since the rows of a cluster are summed before any line. */
function* perCluster(rows: Iterable<ServiceBackends>): Generator<Sample | typeof PAUSE> {
  let cluster: string | undefined;
  let sums = new Map<IpFamily, Counts>();
  for (const row of rows) {
    if (row.cluster !== cluster) {
      if (cluster !== undefined) yield* clusterSamples(cluster, sums);
      cluster = row.cluster;
      sums = new Map();
    }
    let counts = sums.get(row.family);
    if (!counts) {
      counts = { ready: 0, fallback: 0, draining: 0, ejected: 0 };
      sums.set(row.family, counts);
    }
    for (const state of BACKEND_STATES) counts[state] += row.counts[state];
    yield PAUSE;
  }
  if (cluster !== undefined) yield* clusterSamples(cluster, sums);
}

function* clusterSamples(cluster: string, sums: ReadonlyMap<IpFamily, Counts>): Generator<Sample> {
  const label = escapeLabelValue(cluster);
  for (const [family, counts] of [...sums].sort(([a], [b]) => byCodeUnits(a, b))) {
    for (const state of BACKEND_STATES) {
      yield { labelText: `{cluster="${label}",family="${family}",state="${state}"}`, value: counts[state] };
    }
  }
}
