import { Hono } from "hono";
import { nextTimerTurn } from "../../lib/exposition-slices.js";
import type { MetricFamily } from "../../lib/prometheus.js";
import { hexOf, TraceIds } from "../core/http/trace-context.js";
import { NO_TRUSTED_PROXIES } from "../core/http/trusted-proxies.js";
import type { AccessLog } from "../core/observability/access-log.js";
import { propagationOnly, type RequestTracing } from "../core/observability/tracing.js";
import { createRouting, type Routing, type RoutingDeps } from "../core/routing.js";
import { TrafficHistory } from "../core/selection/traffic-history.js";
import type { RouterConfig } from "../core/settings/config.js";
import type { Upstream } from "../transports/upstream.js";
import { type AdminEndpoints, registerAdmin } from "./admin.js";
import { PipelineRun } from "./request-pipeline.js";
import { WebOutput, WebRequest, type WebRequestReaders } from "./web-requests.js";

export interface AppDeps extends RoutingDeps, WebRequestReaders {
  /**
   * How the web path reaches backends (Workers: fetch or a VPC binding; tests: fetch). Without one the app
   * proxies nothing: the Node router's apps serve only its own endpoints (node/request-handler.ts proxies).
   */
  readonly upstream?: Upstream;
  /** Only the routing fields are read: cluster, zone, ipFamily, adminToken, timeouts, retries, metricsBackends. */
  readonly config: RoutingDeps["config"] &
    Pick<RouterConfig, "adminToken"> &
    Partial<Pick<RouterConfig, "metricsBackends" | "trustedProxies">>;
  /** Spans and W3C trace context (core/observability/tracing.ts); default: propagation only, ids from crypto.getRandomValues. */
  readonly tracing?: RequestTracing;
  /** A new request id; default crypto.randomUUID (Node and Workers). */
  readonly newRequestId?: () => string;
  /** core/observability/access-log.ts; undefined when ACCESS_LOG is off. */
  readonly accessLog?: AccessLog;
  /** A turn of the event loop between slices of a metrics scrape; default a 0 ms timer (Node: setImmediate). */
  readonly yieldToLoop?: () => Promise<void>;
  /** Which of the router's own endpoints this app answers (admin.ts); default "all", beside the proxied traffic. */
  readonly endpoints?: AppEndpoints;
  /** The dashboard's recent samples; default one of the app's own, sampled when the dashboard asks. */
  readonly trafficHistory?: TrafficHistory;
  /** The runtime's `process_*` and `nodejs_*` series for /_edgeslice/metrics (Node); none by default. */
  readonly processFamilies?: () => Iterable<MetricFamily>;
}

/**
 * "all": one origin, admin behind the token beside the proxied traffic (Workers). On Node the public listener is
 * "public" (proxied traffic and the probes) and the ADMIN_PORT listener "admin" (no proxying at all).
 */
export type AppEndpoints = AdminEndpoints | "admin";

/**
 * The router's own endpoints under /_edgeslice/ (which of them: `deps.endpoints`), and on the web path (Workers)
 * everything else routed and proxied through the one request pipeline (request-pipeline.ts). `routing` is built
 * from `deps` unless the runtime shares it with another entry (Node's request handler and admin listener).
 */
export function createApp(deps: AppDeps, routing: Routing = createRouting(deps)): Hono {
  const { policy } = routing;
  const { metrics } = policy;
  const app = new Hono();
  // The router's own endpoints are no traffic: they count in no request series (core/observability/metrics.ts).
  registerAdmin(app, {
    source: routing.source,
    expired: () => routing.source.expired(),
    adminToken: deps.config.adminToken,
    routesOf: routing.routesOf,
    select: routing.select,
    balancer: policy.balancer,
    ejection: policy.ejection,
    metrics,
    snapshotAgeSeconds: routing.snapshotAgeSeconds,
    steering: routing.steering,
    backendSeries: deps.config.metricsBackends ?? "service",
    yieldToLoop: deps.yieldToLoop ?? nextTimerTurn,
    endpoints: deps.endpoints === "public" ? "public" : "all",
    history: deps.trafficHistory ?? new TrafficHistory(),
    ...(deps.processFamilies ? { processFamilies: deps.processFamilies } : {}),
  });
  if (deps.endpoints === "admin" || deps.upstream === undefined) {
    app.all("*", (c) => c.json({ error: "no_route" }, 404));
    return app;
  }
  const pipeline = {
    routing,
    accessLog: deps.accessLog,
    newRequestId: deps.newRequestId ?? (() => crypto.randomUUID()),
    tracing:
      deps.tracing ??
      propagationOnly(new TraceIds((bytes) => hexOf(crypto.getRandomValues(new Uint8Array(bytes))))),
    trustedProxies: deps.config.trustedProxies ?? NO_TRUSTED_PROXIES,
  };
  const output = new WebOutput(deps.upstream);
  app.all("*", async (c) => await new PipelineRun(pipeline, new WebRequest(c, deps), output).run());
  return app;
}
