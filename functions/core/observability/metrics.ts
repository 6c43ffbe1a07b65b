import { type MetricFamily, renderFamilies } from "../../../lib/prometheus.js";
import type { Selection } from "../selection/selection.js";
import { SteeringMetrics } from "../steering/metrics.js";
import { backendFamily } from "./backend-metrics.js";
import { ListenerGauges } from "./listener-gauges.js";
import { type AttemptOutcome, RequestMetrics, type ServiceSeries } from "./request-metrics.js";
import {
  clusterFamilies,
  heldFamilies,
  one,
  type ScrapeViews,
  type SnapshotGauges,
  snapshotFamilies,
} from "./snapshot-families.js";

/**
 * Counters of one router process, rendered on scrape (lib/prometheus.ts): the process-wide series, the RED
 * series per service and cluster (request-metrics.ts) and gauges computed at scrape time. Only traffic the
 * router proxies or answers for a route counts: its own endpoints (health probes, metrics, admin) never do, so
 * a start-up's 503 no_snapshot probes are no 5xx. A scrape reads families() lazily, in slices
 * (lib/exposition-slices.ts).
 */
export type UpstreamErrorKind = "connect" | "timeout" | "transport";

/** A failed attempt's kind as an outcome label: "transport" (the connection failed after sending) is a reset. */
export function attemptOutcome(failure: UpstreamErrorKind | undefined): AttemptOutcome {
  if (failure === undefined) return "ok";
  return failure === "transport" ? "reset" : failure;
}

export class RouterMetrics {
  /** By status class; `client_closed`: the client went away before the response head (nginx's 499). */
  readonly requests = { "1xx": 0, "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0, client_closed: 0 };
  readonly upstreamErrors: Record<UpstreamErrorKind, number> = { connect: 0, timeout: 0, transport: 0 };
  retries = 0;
  ejections = 0;
  /** Client connections and HTTP/2 streams open per listener (Node). */
  readonly listeners = new ListenerGauges();
  /** Connections closed for their PROXY protocol header (node/proxy-header-stage.ts), by why. */
  readonly proxyProtocolRefusals = { untrusted: 0, malformed: 0, timeout: 0 };
  /** Upgraded connections (WebSocket) being proxied now; their 101s count in requests as class 1xx. */
  upgradedConnections = 0;
  /** Duration and attempts per service and cluster. */
  readonly red = new RequestMetrics();
  /** CLUSTER_GRANTS refusals by cluster and kind, counted as they are logged (core/snapshot/snapshot-reports.ts). */
  readonly grantRefusals: RefusalCounts = new Map();
  /** Budget refusals by cluster and kind (records, changes), counted as they are logged. */
  readonly budgetRefusals: RefusalCounts = new Map();
  /** Steered requests by Service, policy, chosen cluster and reason; each cluster's EWMA and health. */
  readonly steering = new SteeringMetrics();

  /** One refusal of CLUSTER_GRANTS was logged: a cluster, a route or a Service's endpoints (granted-clusters.ts). */
  grantRefused(cluster: string, kind: string): void {
    countRefusal(this.grantRefusals, cluster, kind);
  }

  /** A cluster went past its budget: records refused, or its change stream throttled (budget-refusals.ts). */
  budgetRefused(cluster: string, kind: string): void {
    countRefusal(this.budgetRefusals, cluster, kind);
  }

  /**
   * A response sent to a client: its status class and its RED series (the backend's cluster, the route's
   * own series, or `red.unrouted`). `seconds`: from the request's arrival to its response head.
   */
  respond(series: ServiceSeries, method: string, status: number, seconds: number): void {
    this.countResponse(status);
    series.observe(method, status, seconds);
  }

  /** One attempt on a backend of `selection`; a client that went away is no outcome of the backend's. */
  attempted(selection: Selection, cluster: string, failure: UpstreamErrorKind | "client" | undefined): void {
    if (failure === "client") return;
    this.red.forSelection(selection).of(cluster).attempt(attemptOutcome(failure));
  }

  countResponse(status: number): void {
    if (status < 200) this.requests["1xx"]++;
    else if (status < 300) this.requests["2xx"]++;
    else if (status < 400) this.requests["3xx"]++;
    else if (status < 500) this.requests["4xx"]++;
    else this.requests["5xx"]++;
  }

  render(gauges: ScrapeGauges): string {
    return renderFamilies(this.families(gauges));
  }

  /**
   * Every family of a scrape, in a fixed order: the process's counters, the snapshot's and its clusters'
   * gauges, the refusals, what each cluster holds; then the families that compute their samples as they are
   * read (listeners, steering, RED, backends). The first group is taken when the scrape starts.
   */
  *families(gauges: ScrapeGauges): Generator<MetricFamily> {
    yield* [
      ...this.#trafficFamilies(gauges),
      ...snapshotFamilies(gauges.snapshot),
      ...clusterFamilies(gauges),
      ...this.#refusalFamilies(),
      ...heldFamilies(gauges.clusters ?? []),
    ];
    yield* this.listeners.families();
    yield* this.steering.families();
    yield* this.red.families();
    const backends = gauges.backends && backendFamily(gauges.backends, gauges.backendSeries ?? "service");
    if (backends) yield backends;
  }

  /** Responses, failed and retried attempts, ejections, and what is in flight now. */
  #trafficFamilies(gauges: ScrapeGauges): MetricFamily[] {
    return [
      {
        name: "edgeslice_requests_total",
        type: "counter",
        help: "Responses sent to clients by status class; client_closed: the client left before one.",
        samples: labelled("class", this.requests),
      },
      {
        name: "edgeslice_upstream_errors_total",
        type: "counter",
        help: "Failed upstream attempts by kind.",
        samples: labelled("kind", this.upstreamErrors),
      },
      {
        name: "edgeslice_retries_total",
        type: "counter",
        help: "Attempts on another backend after a failure.",
        samples: one(this.retries),
      },
      {
        name: "edgeslice_ejections_total",
        type: "counter",
        help: "Backends ejected after consecutive failures.",
        samples: one(this.ejections),
      },
      {
        name: "edgeslice_ejected_backends",
        type: "gauge",
        help: "Backends currently ejected.",
        samples: one(gauges.ejected),
      },
      {
        name: "edgeslice_in_flight_requests",
        type: "gauge",
        help: "Upstream requests waiting for response headers.",
        samples: one(gauges.inFlight),
      },
      {
        name: "edgeslice_upgraded_connections",
        type: "gauge",
        help: "Upgraded (WebSocket) connections being proxied.",
        samples: one(this.upgradedConnections),
      },
    ];
  }

  /** Connections refused for their PROXY header, records refused by CLUSTER_GRANTS and by budgets. */
  #refusalFamilies(): MetricFamily[] {
    return [
      {
        name: "edgeslice_proxy_protocol_refusals_total",
        type: "counter",
        help: "Connections closed for their PROXY protocol header: from a peer outside TRUSTED_PROXIES (untrusted), malformed or too long, or not whole in time (timeout).",
        samples: labelled("reason", this.proxyProtocolRefusals),
      },
      {
        name: "edgeslice_grant_refusals_total",
        type: "counter",
        help: "Records CLUSTER_GRANTS refused, counted as logged: a cluster it does not list, a route for a host not granted, endpoints outside the cluster's networks.",
        samples: refusalSamples(this.grantRefusals),
      },
      {
        name: "edgeslice_budget_refusals_total",
        type: "counter",
        help: "Times a cluster went past its budget, counted as logged: records refused (records), its change stream throttled (changes).",
        samples: refusalSamples(this.budgetRefusals),
      },
    ];
  }
}

export type ScrapeGauges = { inFlight: number; ejected: number; snapshot: SnapshotGauges } & ScrapeViews;

/** Refusals counted by cluster and kind. */
type RefusalCounts = Map<string, { cluster: string; kind: string; count: number }>;

function countRefusal(counts: RefusalCounts, cluster: string, kind: string): void {
  const key = `${cluster} ${kind}`;
  const counted = counts.get(key);
  if (counted) counted.count++;
  else counts.set(key, { cluster, kind, count: 1 });
}

function refusalSamples(counts: RefusalCounts) {
  return [...counts.values()].map(({ cluster, kind, count }) => ({
    labels: { cluster, kind },
    value: count,
  }));
}

/** One sample per field of `counts`, its name as the value of label `label`. */
function labelled(label: string, counts: Readonly<Record<string, number>>) {
  return Object.entries(counts).map(([name, value]) => ({ labels: { [label]: name }, value }));
}
