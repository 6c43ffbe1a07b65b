import { type MetricFamily, renderFamilies } from "../../lib/prometheus.js";
import type { BudgetReport } from "../../store/record-budget.js";
import { type BackendSeries, backendFamily } from "./backend-metrics.js";
import type { ServiceBackends } from "./backend-states.js";
import { ListenerGauges } from "./listener-gauges.js";
import { type AttemptOutcome, RequestMetrics, type ServiceSeries } from "./request-metrics.js";
import type { Selection } from "./selection.js";
import { SteeringMetrics } from "./steering/metrics.js";

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
  readonly clusters?: readonly {
    readonly name: string;
    readonly stale: boolean;
    readonly expired?: boolean;
    readonly budget?: BudgetReport | undefined;
  }[];
  /** Route ids clusters publish with different definitions (snapshot-routes.ts). */
  readonly routeConflicts?: number;
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
  /** CLUSTER_GRANTS refusals by cluster and kind, counted as they are logged (core/snapshot-reports.ts). */
  readonly grantRefusals = new Map<string, { cluster: string; kind: string; count: number }>();
  /** Budget refusals by cluster and kind (records, changes), counted as they are logged. */
  readonly budgetRefusals = new Map<string, { cluster: string; kind: string; count: number }>();
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

  /** Every family of a scrape; the large ones (RED, backends) compute their samples as they are read. */
  *families(gauges: ScrapeGauges): Generator<MetricFamily> {
    const one = (value: number) => [{ value }];
    const s = gauges.snapshot;
    const families: MetricFamily[] = [
      {
        name: "edgeslice_requests_total",
        type: "counter",
        help: "Responses sent to clients by status class; client_closed: the client left before one.",
        samples: Object.entries(this.requests).map(([klass, value]) => ({ labels: { class: klass }, value })),
      },
      {
        name: "edgeslice_upstream_errors_total",
        type: "counter",
        help: "Failed upstream attempts by kind.",
        samples: Object.entries(this.upstreamErrors).map(([kind, value]) => ({ labels: { kind }, value })),
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
    if (gauges.clusters) {
      families.push({
        name: "edgeslice_cluster_stale",
        type: "gauge",
        help: "1 while the cluster's lease has run out (its sync went quiet), 0 while fresh.",
        samples: gauges.clusters.map((c) => ({ labels: { cluster: c.name }, value: c.stale ? 1 : 0 })),
      });
      families.push({
        name: "edgeslice_cluster_expired",
        type: "gauge",
        help: "1 while the cluster has been stale longer than FAIL_STATIC_MAX_MS and serves nothing.",
        samples: gauges.clusters.map((c) => ({ labels: { cluster: c.name }, value: c.expired ? 1 : 0 })),
      });
    }
    if (gauges.routeConflicts !== undefined) {
      families.push({
        name: "edgeslice_route_conflicts",
        type: "gauge",
        help: "Routes that clusters publish with different definitions; each serves the definition most publish.",
        samples: one(gauges.routeConflicts),
      });
    }
    families.push({
      name: "edgeslice_proxy_protocol_refusals_total",
      type: "counter",
      help: "Connections closed for their PROXY protocol header: from a peer outside TRUSTED_PROXIES (untrusted), malformed or too long, or not whole in time (timeout).",
      samples: Object.entries(this.proxyProtocolRefusals).map(([reason, value]) => ({
        labels: { reason },
        value,
      })),
    });
    families.push({
      name: "edgeslice_grant_refusals_total",
      type: "counter",
      help: "Records CLUSTER_GRANTS refused, counted as logged: a cluster it does not list, a route for a host not granted, endpoints outside the cluster's networks.",
      samples: [...this.grantRefusals.values()].map(({ cluster, kind, count }) => ({
        labels: { cluster, kind },
        value: count,
      })),
    });
    families.push({
      name: "edgeslice_budget_refusals_total",
      type: "counter",
      help: "Times a cluster went past its budget, counted as logged: records refused (records), its change stream throttled (changes).",
      samples: [...this.budgetRefusals.values()].map(({ cluster, kind, count }) => ({
        labels: { cluster, kind },
        value: count,
      })),
    });
    families.push(...heldFamilies(gauges.clusters ?? []));
    yield* families;
    yield* this.listeners.families();
    yield* this.steering.families();
    yield* this.red.families();
    const backends = gauges.backends && backendFamily(gauges.backends, gauges.backendSeries ?? "service");
    if (backends) yield backends;
  }
}

export type ScrapeGauges = { inFlight: number; ejected: number; snapshot: SnapshotGauges } & ScrapeViews;

function countRefusal(
  counts: Map<string, { cluster: string; kind: string; count: number }>,
  cluster: string,
  kind: string,
): void {
  const key = `${cluster} ${kind}`;
  const counted = counts.get(key);
  if (counted) counted.count++;
  else counts.set(key, { cluster, kind, count: 1 });
}

/** What the reader holds of each cluster within its budget (store/record-budget.ts), where it counts. */
function heldFamilies(clusters: NonNullable<ScrapeViews["clusters"]>): MetricFamily[] {
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
