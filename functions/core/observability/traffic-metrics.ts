import {
  type CounterChild,
  CounterFamily,
  type HistogramChild,
  HistogramFamily,
  type MetricFamily,
} from "../../../lib/prometheus.js";

/**
 * The series operators of other proxies look for beside the RED ones (request-metrics.ts): requests per route
 * and rule, request and response bytes and the whole exchange's time per Service and cluster. Label values come
 * from the store (route ids, rule indexes, Services, clusters) or fixed sets (status codes), as the RED series'
 * do, so their number is bounded by what was published. Each series is resolved once per selection (routes) or
 * per Service series (bytes, time) and recorded into with numbers only.
 */

/** Requests of one route rule, by status code; a child per code on first use. */
export class RuleRequests {
  readonly #family: CounterFamily;
  readonly #route: string;
  readonly #rule: string;
  readonly #byCode = new Map<number, CounterChild>();
  #lastCode = -1;
  #last: CounterChild | undefined;

  constructor(family: CounterFamily, route: string, rule: number) {
    this.#family = family;
    this.#route = route;
    this.#rule = String(rule);
  }

  count(status: number): void {
    const code = Number.isInteger(status) && status >= 100 && status <= 599 ? status : 0;
    let child = code === this.#lastCode ? this.#last : this.#byCode.get(code);
    if (child === undefined) {
      child = this.#family.child(this.#route, this.#rule, code === 0 ? "other" : String(code));
      this.#byCode.set(code, child);
    }
    this.#lastCode = code;
    this.#last = child;
    child.value++;
  }
}

/** One (service, cluster)'s bytes and whole-exchange time. */
export class TransferSeries {
  readonly requestBytes: CounterChild;
  readonly responseBytes: CounterChild;
  readonly total: HistogramChild;

  constructor(requestBytes: CounterChild, responseBytes: CounterChild, total: HistogramChild) {
    this.requestBytes = requestBytes;
    this.responseBytes = responseBytes;
    this.total = total;
  }

  /** A proxied exchange ended `seconds` after its request arrived, having moved these body bytes. */
  finished(seconds: number, requestBytes: number, responseBytes: number): void {
    this.requestBytes.value += requestBytes;
    this.responseBytes.value += responseBytes;
    this.total.observe(seconds);
  }
}

export class TrafficMetrics {
  readonly #routes = new CounterFamily(
    "edgeslice_route_requests_total",
    "Responses to requests routed to a backendRef, by route id, rule index and status code.",
    ["route", "rule", "code"],
  );
  readonly #requestBytes = new CounterFamily(
    "edgeslice_request_bytes_total",
    "Request body bytes read from clients and sent on, by service and cluster.",
    ["service", "cluster"],
  );
  readonly #responseBytes = new CounterFamily(
    "edgeslice_response_bytes_total",
    "Response body bytes sent to clients, by service and cluster.",
    ["service", "cluster"],
  );
  readonly #total: HistogramFamily;
  readonly #rules = new Map<string, RuleRequests>();

  /** `buckets`: the RED durations' (request-metrics.ts), so time to first byte and total time compare. */
  constructor(buckets: readonly number[]) {
    this.#total = new HistogramFamily(
      "edgeslice_request_total_seconds",
      "Time from a request's arrival to its response's last byte (or the client leaving), by service and cluster.",
      ["service", "cluster"],
      buckets,
    );
  }

  /** The counters of one route rule, shared by every selection of it. */
  rule(route: string, rule: number): RuleRequests {
    const key = `${route}\u0000${rule}`;
    let requests = this.#rules.get(key);
    if (!requests) {
      requests = new RuleRequests(this.#routes, route, rule);
      this.#rules.set(key, requests);
    }
    return requests;
  }

  transfer(service: string, cluster: string): TransferSeries {
    return new TransferSeries(
      this.#requestBytes.child(service, cluster),
      this.#responseBytes.child(service, cluster),
      this.#total.child(service, cluster),
    );
  }

  families(): MetricFamily[] {
    return [
      this.#routes.family(),
      this.#requestBytes.family(),
      this.#responseBytes.family(),
      this.#total.family(),
    ];
  }
}
