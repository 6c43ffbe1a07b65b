import { HTTP_METHODS } from "../../../lib/http-methods.js";
import type { IpFamily } from "../../../lib/ip.js";
import {
  type CounterChild,
  CounterFamily,
  type HistogramChild,
  HistogramFamily,
  type MetricFamily,
} from "../../../lib/prometheus.js";
import type { Selection } from "../selection/selection.js";
import { type RuleRequests, TrafficMetrics, type TransferSeries } from "./traffic-metrics.js";

/**
 * The RED series (rate, errors, duration) per service and cluster. Label values come only from the store
 * (a record's `service`, its cluster's name, the family chosen for it) or from fixed sets (method, status
 * code, attempt outcome), never from request text, so the number of series is bounded by what was published:
 * a host the store does not route is `service=""`.
 *
 * The hot path resolves a RouteSeries once per selection (memoised: a selection lives as long as its
 * snapshot's route index), takes the ServiceSeries of the backend's cluster from it (a scan of a few
 * clusters), and records with numbers only.
 */

/** Seconds. Sub-millisecond answers are the router's own (404, 503); 30 s is the default total timeout. */
export const DURATION_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** The method label: one of HTTP_METHODS, or OTHER for anything else (method names are case-sensitive). */
export const METHOD_LABELS = [...HTTP_METHODS, "OTHER"] as const;
const OTHER_METHOD = HTTP_METHODS.length;
const KNOWN_METHODS: readonly string[] = HTTP_METHODS;

export type AttemptOutcome = "ok" | "connect" | "timeout" | "reset";
export const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = ["ok", "connect", "timeout", "reset"];

export function methodIndex(method: string): number {
  const index = KNOWN_METHODS.indexOf(method);
  return index < 0 ? OTHER_METHOD : index;
}

/** The `code` label: the three digits for 100-599 (RFC 9110 §15), `other` for anything a backend invents. */
export function codeLabel(status: number): string {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : "other";
}

/** Durations of one (service, cluster), by method and status; children created on first use. */
class DurationTable {
  readonly service: string;
  readonly cluster: string;
  readonly #family: HistogramFamily;
  readonly #byKey = new Map<number, HistogramChild>();
  #lastKey = -1;
  #lastChild: HistogramChild | undefined;

  constructor(family: HistogramFamily, service: string, cluster: string) {
    this.#family = family;
    this.service = service;
    this.cluster = cluster;
  }

  observe(method: string, status: number, seconds: number): void {
    const code = status >= 100 && status <= 599 ? status : 0;
    const key = methodIndex(method) * 1000 + code;
    let child = key === this.#lastKey ? this.#lastChild : this.#byKey.get(key);
    if (child === undefined) {
      child = this.#family.child(
        this.service,
        this.cluster,
        METHOD_LABELS[methodIndex(method)] ?? "OTHER",
        codeLabel(status),
      );
      this.#byKey.set(key, child);
    }
    this.#lastKey = key;
    this.#lastChild = child;
    child.observe(seconds);
  }

  /**
   * Responses so far, those with a 4xx and a 5xx status (router-made 404, 502/503/504 included), and their
   * durations by DURATION_BUCKETS (not cumulative; the last count is above the last bound).
   */
  totals(): Omit<ServiceTotals, "service" | "cluster"> {
    let requests = 0;
    let clientErrors = 0;
    let errors = 0;
    const durations = new Array<number>(DURATION_BUCKETS.length + 1).fill(0);
    for (const [key, child] of this.#byKey) {
      const count = child.count();
      requests += count;
      const code = key % 1000;
      if (code >= 500) errors += count;
      else if (code >= 400) clientErrors += count;
      child.counts.forEach((bucket, i) => {
        durations[i] = (durations[i] ?? 0) + bucket;
      });
    }
    return { requests, clientErrors, errors, durations };
  }
}

/** What the hot path records into for one (service, cluster, family). */
export class ServiceSeries {
  readonly service: string;
  readonly cluster: string;
  /** The family the selection chose for this cluster; "" for the router's own answers. */
  readonly family: IpFamily | "";
  readonly #durations: DurationTable;
  readonly #attemptFamily: CounterFamily;
  readonly #traffic: TrafficMetrics;
  #transfer: TransferSeries | undefined;
  /** By ATTEMPT_OUTCOMES index, resolved on first use (the router's own series never attempts). */
  readonly #attempts: (CounterChild | undefined)[] = [undefined, undefined, undefined, undefined];

  constructor(
    durations: DurationTable,
    family: IpFamily | "",
    attempts: CounterFamily,
    traffic: TrafficMetrics,
  ) {
    this.service = durations.service;
    this.cluster = durations.cluster;
    this.family = family;
    this.#durations = durations;
    this.#attemptFamily = attempts;
    this.#traffic = traffic;
  }

  /** A proxied exchange ended (traffic-metrics.ts): its whole time and body bytes. */
  finished(seconds: number, requestBytes: number, responseBytes: number): void {
    this.#transfer ??= this.#traffic.transfer(this.service, this.cluster);
    this.#transfer.finished(seconds, requestBytes, responseBytes);
  }

  /** A response whose head went out `seconds` after the request arrived. */
  observe(method: string, status: number, seconds: number): void {
    this.#durations.observe(method, status, seconds);
  }

  attempt(outcome: AttemptOutcome): void {
    const index = outcome === "ok" ? 0 : outcome === "connect" ? 1 : outcome === "timeout" ? 2 : 3;
    let child = this.#attempts[index];
    if (child === undefined) {
      child = this.#attemptFamily.child(this.service, this.cluster, this.family, outcome);
      this.#attempts[index] = child;
    }
    child.value++;
  }
}

/** A selection's series: one per cluster it chose, and the route's own for answers no backend gave. */
export class RouteSeries {
  /** The route's service with `cluster=""`: no endpoints, or every attempt failed. */
  readonly router: ServiceSeries;
  /** The route rule's requests (edgeslice_route_requests_total); undefined for a selection no route names. */
  readonly rule: RuleRequests | undefined;
  readonly #clusters: readonly string[];
  readonly #series: readonly ServiceSeries[];

  constructor(
    router: ServiceSeries,
    clusters: readonly string[],
    series: readonly ServiceSeries[],
    rule?: RuleRequests,
  ) {
    this.router = router;
    this.#clusters = clusters;
    this.#series = series;
    this.rule = rule;
  }

  /** The series of the backend's cluster (the router's when the cluster is not part of the selection). */
  of(cluster: string): ServiceSeries {
    const clusters = this.#clusters;
    for (let i = 0; i < clusters.length; i++) {
      if (clusters[i] === cluster) return this.#series[i] as ServiceSeries;
    }
    return this.router;
  }
}

export interface ServiceTotals {
  readonly service: string;
  readonly cluster: string;
  readonly requests: number;
  /** Responses with a 4xx status. */
  readonly clientErrors: number;
  /** Responses with a 5xx status. */
  readonly errors: number;
  /** Responses by DURATION_BUCKETS, each bucket apart (not cumulative); the last one is above 30 s. */
  readonly durations: readonly number[];
}

export class RequestMetrics {
  readonly #durations = new HistogramFamily(
    "edgeslice_request_duration_seconds",
    "Time from a request's arrival to its response head (first byte) being sent, by service, cluster, method and code.",
    ["service", "cluster", "method", "code"],
    DURATION_BUCKETS,
  );
  readonly #attempts = new CounterFamily(
    "edgeslice_upstream_attempts_total",
    "Attempts sent to backends by service, cluster, family and outcome (ok, connect, timeout, reset).",
    ["service", "cluster", "family", "outcome"],
  );
  readonly #traffic = new TrafficMetrics(DURATION_BUCKETS);
  readonly #tables = new Map<string, DurationTable>();
  readonly #series = new Map<string, ServiceSeries>();
  readonly #routes = new WeakMap<Selection, RouteSeries>();
  /** Requests no published route matched: `service=""`, `cluster=""`. */
  readonly unrouted: ServiceSeries;

  constructor() {
    this.unrouted = this.series("", "", "");
  }

  /** The series of a selection, resolved once and memoised on the selection's identity. */
  forSelection(selection: Selection): RouteSeries {
    let route = this.#routes.get(selection);
    if (!route) {
      const choices = selection.clusters;
      const router = this.series(selection.service, "", "");
      route = new RouteSeries(
        router,
        choices.map((choice) => choice.cluster),
        choices.map((choice) => this.series(choice.service, choice.cluster, choice.family ?? "")),
        selection.route && this.#traffic.rule(selection.route.id, selection.route.rule),
      );
      this.#routes.set(selection, route);
    }
    return route;
  }

  /** The series of one (service, cluster, family), created on first use. */
  series(service: string, cluster: string, family: IpFamily | ""): ServiceSeries {
    const key = `${service}\u0000${cluster}\u0000${family}`;
    let series = this.#series.get(key);
    if (!series) {
      const tableKey = `${service}\u0000${cluster}`;
      let table = this.#tables.get(tableKey);
      if (!table) {
        table = new DurationTable(this.#durations, service, cluster);
        this.#tables.set(tableKey, table);
      }
      series = new ServiceSeries(table, family, this.#attempts, this.#traffic);
      this.#series.set(key, series);
    }
    return series;
  }

  /** Cumulative responses, 4xx, 5xx and durations per (service, cluster), for the dashboard's history. */
  totals(): ServiceTotals[] {
    const totals: ServiceTotals[] = [];
    for (const table of this.#tables.values()) {
      const counted = table.totals();
      if (counted.requests > 0) totals.push({ service: table.service, cluster: table.cluster, ...counted });
    }
    return totals;
  }

  families(): MetricFamily[] {
    return [this.#durations.family(), this.#attempts.family(), ...this.#traffic.families()];
  }
}
