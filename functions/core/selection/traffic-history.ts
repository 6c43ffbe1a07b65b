import { byCodeUnits } from "../../../lib/code-unit-order.js";
import { DURATION_BUCKETS, type ServiceTotals } from "../observability/request-metrics.js";

/**
 * The dashboard's last minutes: a small ring of samples of the counters the router keeps anyway (responses,
 * 4xx, 5xx and durations per service and cluster, retries), and what each interval between two samples says:
 * request rate, 4xx and 5xx ratios, p50 and p99 latency. Samples are taken on a timer or when the dashboard
 * asks, never per request; the clock is the caller's.
 */
export interface TrafficPoint {
  /** ms since epoch: the end of the interval. */
  readonly at: number;
  /** Responses per second. */
  readonly rate: number;
  /** Share of responses with a 4xx, and with a 5xx; null without responses. */
  readonly clientErrorRatio: number | null;
  readonly serverErrorRatio: number | null;
  /** Seconds, interpolated within the histogram's buckets as Prometheus' histogram_quantile does; null without responses. */
  readonly p50: number | null;
  readonly p99: number | null;
}

export interface TrafficSeries {
  readonly name: string;
  readonly points: readonly TrafficPoint[];
}

export interface TrafficView {
  /** The time between two samples, ms. */
  readonly intervalMs: number;
  /** The busiest services over the window, one line each (OTHER_SERIES sums the rest). */
  readonly services: readonly TrafficSeries[];
  /** Each cluster that answered (ROUTER_SERIES: the router itself answered: no route, no endpoints, failures). */
  readonly clusters: readonly TrafficSeries[];
  /** Attempts on another backend after a failure, per second. */
  readonly retries: readonly { readonly at: number; readonly perSecond: number }[];
}

export const ROUTER_SERIES = "(router)";
export const UNROUTED_SERIES = "(no route)";
export const OTHER_SERIES = "(other)";

interface Sample {
  readonly at: number;
  readonly totals: readonly ServiceTotals[];
  readonly retries: number;
}

interface Counts {
  requests: number;
  clientErrors: number;
  errors: number;
  durations: number[];
}

export interface TrafficHistoryOptions {
  /** Samples kept; the window is (capacity - 1) intervals. */
  readonly capacity?: number;
  /** A sample closer than this to the last one is not taken. */
  readonly intervalMs?: number;
  /** Services drawn apart; the rest are summed. */
  readonly maxServices?: number;
}

export class TrafficHistory {
  readonly intervalMs: number;
  readonly #capacity: number;
  readonly #maxServices: number;
  readonly #samples: Sample[] = [];

  constructor(options: TrafficHistoryOptions = {}) {
    this.intervalMs = options.intervalMs ?? 5_000;
    this.#capacity = Math.max(2, options.capacity ?? 61);
    this.#maxServices = options.maxServices ?? 8;
  }

  /** Takes a sample unless the last one is younger than the interval; says whether it did. */
  record(now: number, totals: readonly ServiceTotals[], retries: number): boolean {
    const last = this.#samples.at(-1);
    if (last && now - last.at < this.intervalMs) return false;
    this.#samples.push({ at: now, totals, retries });
    if (this.#samples.length > this.#capacity) this.#samples.shift();
    return true;
  }

  view(): TrafficView {
    const samples = this.#samples;
    const serviceNames = this.#busiestServices();
    const byService = (t: ServiceTotals) => {
      const name = t.service === "" ? UNROUTED_SERIES : t.service;
      return serviceNames.has(name) ? name : OTHER_SERIES;
    };
    const byCluster = (t: ServiceTotals) => (t.cluster === "" ? ROUTER_SERIES : t.cluster);
    const retries: { at: number; perSecond: number }[] = [];
    for (let i = 1; i < samples.length; i++) {
      const [before, after] = [samples[i - 1] as Sample, samples[i] as Sample];
      const seconds = (after.at - before.at) / 1000;
      retries.push({ at: after.at, perSecond: Math.max(0, after.retries - before.retries) / seconds });
    }
    return {
      intervalMs: this.intervalMs,
      services: this.#series(byService),
      clusters: this.#series(byCluster),
      retries,
    };
  }

  /** The services with the most responses over the window. */
  #busiestServices(): Set<string> {
    const first = this.#samples[0];
    const last = this.#samples.at(-1);
    if (!first || !last) return new Set();
    const grouped = delta(group(first.totals, serviceName), group(last.totals, serviceName));
    const ranked = [...grouped].sort((a, b) => b[1].requests - a[1].requests || byCodeUnits(a[0], b[0]));
    return new Set(ranked.slice(0, this.#maxServices).map(([name]) => name));
  }

  #series(nameOf: (t: ServiceTotals) => string): TrafficSeries[] {
    const lines = new Map<string, TrafficPoint[]>();
    const samples = this.#samples;
    for (let i = 1; i < samples.length; i++) {
      const [before, after] = [samples[i - 1] as Sample, samples[i] as Sample];
      const seconds = (after.at - before.at) / 1000;
      for (const [name, counts] of delta(group(before.totals, nameOf), group(after.totals, nameOf))) {
        let points = lines.get(name);
        if (!points) {
          points = [];
          lines.set(name, points);
        }
        points.push(pointOf(after.at, seconds, counts));
      }
    }
    return [...lines].map(([name, points]) => ({ name, points })).sort((a, b) => byCodeUnits(a.name, b.name));
  }
}

/** The q-quantile of durations counted by DURATION_BUCKETS, linear within its bucket; null when nothing was counted. */
export function bucketQuantile(q: number, durations: readonly number[]): number | null {
  const total = durations.reduce((sum, count) => sum + count, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < durations.length; i++) {
    const count = durations[i] ?? 0;
    if (count > 0 && below + count >= rank) {
      const upper = DURATION_BUCKETS[i];
      // Above the last bound: the last bound is all a histogram can say.
      if (upper === undefined) return DURATION_BUCKETS.at(-1) ?? null;
      const lower = i === 0 ? 0 : (DURATION_BUCKETS[i - 1] ?? 0);
      return lower + ((upper - lower) * (rank - below)) / count;
    }
    below += count;
  }
  return DURATION_BUCKETS.at(-1) ?? null;
}

function pointOf(at: number, seconds: number, counts: Counts): TrafficPoint {
  const { requests } = counts;
  return {
    at,
    rate: requests / seconds,
    clientErrorRatio: requests > 0 ? counts.clientErrors / requests : null,
    serverErrorRatio: requests > 0 ? counts.errors / requests : null,
    p50: bucketQuantile(0.5, counts.durations),
    p99: bucketQuantile(0.99, counts.durations),
  };
}

function serviceName(t: ServiceTotals): string {
  return t.service === "" ? UNROUTED_SERIES : t.service;
}

function group(totals: readonly ServiceTotals[], nameOf: (t: ServiceTotals) => string): Map<string, Counts> {
  const grouped = new Map<string, Counts>();
  for (const t of totals) {
    const name = nameOf(t);
    let counts = grouped.get(name);
    if (!counts) {
      counts = { requests: 0, clientErrors: 0, errors: 0, durations: new Array(t.durations.length).fill(0) };
      grouped.set(name, counts);
    }
    counts.requests += t.requests;
    counts.clientErrors += t.clientErrors;
    counts.errors += t.errors;
    t.durations.forEach((count, i) => {
      counts.durations[i] = (counts.durations[i] ?? 0) + count;
    });
  }
  return grouped;
}

/** What each group counted between two samples (counters only grow; a group new in `after` counted it all). */
function delta(before: Map<string, Counts>, after: Map<string, Counts>): Map<string, Counts> {
  const counted = new Map<string, Counts>();
  for (const [name, now] of after) {
    const then = before.get(name);
    counted.set(name, {
      requests: Math.max(0, now.requests - (then?.requests ?? 0)),
      clientErrors: Math.max(0, now.clientErrors - (then?.clientErrors ?? 0)),
      errors: Math.max(0, now.errors - (then?.errors ?? 0)),
      durations: now.durations.map((count, i) => Math.max(0, count - (then?.durations[i] ?? 0))),
    });
  }
  return counted;
}
