import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { listenOn } from "../../lib/listen.js";
import { createJsonLogger, type Logger } from "../../lib/logger.js";
import { processMetrics } from "../../lib/process-metrics.js";
import type { BackendTlsReader } from "../../store/backend-tls.js";
import type { CertificateReader } from "../../store/certificates.js";
import { endpointAddress } from "../../store/records.js";
import type { RedisSnapshotSource } from "../../store/redis/source.js";
import type { SnapshotSource } from "../../store/store.js";
import { type AppDeps, createApp } from "../app/app.js";
import { createRequestIds } from "../core/http/request-id.js";
import { TraceIds } from "../core/http/trace-context.js";
import { NO_TRUSTED_PROXIES } from "../core/http/trusted-proxies.js";
import { batchedLines, createAccessLog } from "../core/observability/access-log.js";
import { propagationOnly, type RequestTracing } from "../core/observability/tracing.js";
import { createRouting } from "../core/routing.js";
import { TrafficHistory } from "../core/selection/traffic-history.js";
import type { RouterConfig } from "../core/settings/config.js";
import type { UpstreamPoolOptions } from "../transports/upstream.js";
import { Dispatchers } from "./dispatchers.js";
import { H2cPools } from "./h2c/h2c-pools.js";
import type { H2cSettings } from "./h2c/h2c-session.js";
import { Http1Dispatcher } from "./http1-dispatcher.js";
import { createHttp1Front } from "./http1-front.js";
import { splitCleartext } from "./http2-front/cleartext-split.js";
import { createHttp2Front } from "./http2-front/http2-front.js";
import { HttpsDispatcher } from "./https-dispatcher.js";
import { countingStage, countingStreams } from "./listener-counts.js";
import { type ConnectionStage, routerProxyHeaderStage, withConnectionStage } from "./proxy-header-stage.js";
import { RequestHandler } from "./request-handler.js";
import { RouterShutdown } from "./router-shutdown.js";
import { openRouterStore, type RouterStore } from "./router-store.js";
import { BackendTlsSource } from "./tls/backend-tls-source.js";
import { type HttpsListener, startRouterHttps } from "./tls/https-listener.js";
import { createOtelTracing } from "./tracing/otel-tracing.js";

/** How long close() waits for in-flight requests and upgraded connections; deploy/router sizes its grace period on it. */
export const DEFAULT_DRAIN_MS = 10_000;

export interface NodeRouterDeps {
  readonly logger?: Logger;
  /** A ready source (e.g. MemoryStore for the all-in-one); default: Redis at config.redisUrl. */
  readonly source?: SnapshotSource;
  /** The HTTP/1.1 dispatcher's pools (connections per backend, timeouts); defaults in http1-dispatcher.ts. */
  readonly upstreamOptions?: UpstreamPoolOptions;
  /** The h2c upstreams' sessions and streams (docs/configuration.md: H2C_* settings); defaults in h2c/h2c-session.ts. */
  readonly h2c?: Partial<H2cSettings>;
  /** Bind address; production default 0.0.0.0, tests pass 127.0.0.1 or ::1. */
  readonly host?: string;
  /** The admin listener's bind address; default config.adminHost, else `host`. */
  readonly adminHost?: string;
  readonly now?: () => number;
  readonly random?: () => number;
  /** Store refresh period of the Redis source. */
  readonly refreshIntervalMs?: number;
  /** How long close() waits for in-flight requests and upgraded connections before cutting them. */
  readonly drainMs?: number;
  /** Tuning of passive ejection (tests); defaults in core/selection/ejection.ts. */
  readonly ejection?: AppDeps["ejection"];
  /** Where HTTPS certificates are read with `source` (a MemoryStore); default: the router's Redis. */
  readonly certificates?: CertificateReader;
  /** Where backend TLS records are read with `source` (a MemoryStore); default: the router's Redis. */
  readonly backendTls?: BackendTlsReader;
}

export interface NodeRouter {
  /** `http://host:port` the router listens on. */
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  /** `http://host:port` of the admin listener (ADMIN_PORT): explain, routes, metrics, the dashboard. */
  readonly adminUrl: string;
  readonly adminPort: number;
  readonly adminServer: Server;
  /** The Redis source when the router owns one (for status and tests). */
  readonly redisSource: RedisSnapshotSource | undefined;
  /** HTTPS_PORT's listener (tls/https-listener.ts); undefined without TLS_STORE_KEY. */
  readonly https: HttpsListener | undefined;
  /** The upstream dispatchers (open pools and sessions, for tests and metrics). */
  readonly dispatchers: Dispatchers;
  /**
   * Stops accepting, drains in-flight requests up to `drainMs`, then cuts what is left (upgraded
   * connections included) and closes pools and Redis.
   */
  close(): Promise<void>;
}

/** What the listeners serve, built before any of them listens. */
interface RouterCore {
  readonly store: RouterStore;
  readonly dispatchers: Dispatchers;
  /** The BackendTLSPolicy setups the HTTPS dispatcher opens TLS to pods with; undefined: no records read. */
  readonly backendTls: BackendTlsSource | undefined;
  readonly handler: RequestHandler;
  readonly routing: ReturnType<typeof createRouting>;
  readonly adminApp: ReturnType<typeof createApp>;
  readonly trafficHistory: TrafficHistory;
  readonly sample: () => void;
  /** PROXY_PROTOCOL: trusted balancers' PROXY headers are read before anything else of a connection. */
  readonly stage: ConnectionStage | undefined;
  /** Spans exported over OTLP, when OTEL_* says so. */
  readonly otel: { shutdown(): Promise<void> } | undefined;
  /** HTTPS_PORT's listener, once it listens (its metrics are the admin endpoint's). */
  https: HttpsListener | undefined;
}

/**
 * Wires the Node router, one path for every request (ARCHITECTURE.md): the fronts (http1-front.ts on PORT,
 * http2-front/ for h2c prior knowledge there and ALPN h2, tls/ on HTTPS_PORT) hand every request to the one request
 * handler (request-handler.ts), whose exchanges go to the upstream dispatchers (HTTP/1.1 pools of lib/http1,
 * h2c sessions of h2c/). Hono serves the router's own endpoints: the probes on PORT and everything on
 * ADMIN_PORT. It listens at once: the first store load runs in the background (a Redis that hangs never delays
 * it), and until a snapshot loads healthz and requests answer 503 no_snapshot.
 */
export async function startNodeRouter(config: RouterConfig, deps: NodeRouterDeps = {}): Promise<NodeRouter> {
  const logger = deps.logger ?? createJsonLogger({ level: config.logLevel, base: { component: "router" } });
  const core = routerCore(config, deps, logger);
  const drainMs = deps.drainMs ?? DEFAULT_DRAIN_MS;
  const server = createHttp1Front(core.handler, config);
  // HTTP/2 sessions close after the HTTP/1.1 keep-alive timeout with no stream; a new connection that has not
  // told its protocol within the headers timeout is closed (http2-front/cleartext-split.ts).
  const idleTimeoutMs = config.clientKeepAliveTimeoutMs;
  const { listeners } = core.routing.policy.metrics;
  const streams = countingStreams(listeners, core.handler.http2);
  const http2 = createHttp2Front({ streams, drainMs, idleTimeoutMs, logger });
  const split = splitCleartext(server, http2, config.clientHeadersTimeoutMs);
  // Each connection counted, then (PROXY_PROTOCOL) a trusted balancer's header read, before the h2c split and
  // TLS: wrapping the split, the stage runs first.
  withConnectionStage(server, countingStage(listeners, "http", core.stage));
  const host = deps.host ?? "0.0.0.0";
  await listenOn(server, { port: config.port, host }, { port: "PORT", host: "HOST" });
  const adminServer = createServer(getRequestListener(core.adminApp.fetch));
  const adminHost = deps.adminHost ?? config.adminHost ?? host;
  try {
    await listenOn(
      adminServer,
      { port: config.adminPort, host: adminHost },
      { port: "ADMIN_PORT", host: "ADMIN_HOST" },
    );
    core.https = await startRouterHttps(config, {
      reader: core.store.certificates,
      httpServer: server,
      http2Front: http2,
      host,
      logger,
      passthrough: { routing: core.routing },
      storeReady: core.store.loaded,
      connectionStage: countingStage(listeners, "https", core.stage),
    });
  } catch (error) {
    server.close();
    adminServer.close();
    throw error;
  }
  const url = `http://${endpointAddress({ ip: host, port: (server.address() as AddressInfo).port })}`;
  const adminPort = (adminServer.address() as AddressInfo).port;
  const adminUrl = `http://${endpointAddress({ ip: adminHost, port: adminPort })}`;
  logger.info("router listening", { url, adminUrl });
  // The dashboard's last minutes fill whether or not anyone watches; a sample reads the counters, no request.
  const sampling = setInterval(core.sample, core.trafficHistory.intervalMs);
  sampling.unref();
  const shutdown = new RouterShutdown(core, { server, adminServer, http2, split, sampling, drainMs, logger });
  const { port } = server.address() as AddressInfo;
  const { redisSource } = core.store;
  return {
    url,
    port,
    server,
    adminUrl,
    adminPort,
    adminServer,
    redisSource,
    https: core.https,
    close: () => shutdown.close(),
    dispatchers: core.dispatchers,
  };
}

/** The store, the dispatchers, the routing core, the request handler and the admin apps over them. */
function routerCore(config: RouterConfig, deps: NodeRouterDeps, logger: Logger): RouterCore {
  const now = deps.now ?? Date.now;
  const store = openRouterStore(config, {
    logger,
    now,
    source: deps.source,
    certificates: deps.certificates,
    backendTls: deps.backendTls,
    refreshIntervalMs: deps.refreshIntervalMs,
  });
  const backendTls =
    store.backendTls && new BackendTlsSource(store.backendTls, logger, { storeKey: config.tlsStoreKey });
  backendTls?.start(store.loaded);
  const dispatchers = new Dispatchers({
    http1: new Http1Dispatcher(deps.upstreamOptions),
    h2c: new H2cPools({ ...config.h2c, ...deps.h2c }),
    ...(backendTls ? { https: new HttpsDispatcher(backendTls, deps.upstreamOptions) } : {}),
  });
  const trafficHistory = new TrafficHistory();
  const newRequestId = createRequestIds(randomBytes);
  const traceIds = new TraceIds((bytes) => randomBytes(bytes).toString("hex"));
  const otel = config.tracing ? createOtelTracing(config.tracing, traceIds) : undefined;
  const tracing: RequestTracing = otel ?? propagationOnly(traceIds);
  const appDeps: AppDeps = {
    trafficHistory,
    processFamilies: () => [...processMetrics().families(), ...(core.https?.families() ?? [])],
    newRequestId,
    tracing,
    source: store.source,
    config,
    now,
    random: deps.random ?? Math.random,
    balancing: "p2c",
    logger,
    // Backends of a port with a BackendTLSPolicy are selected only where the records are read.
    backendTls: backendTls !== undefined,
    ...(deps.ejection ? { ejection: deps.ejection } : {}),
    // The routing core's 421 rule compares the certificates the SNI and the routed host get (core/tls/misdirected.ts).
    certificateOf: (name) => core.https?.certificateOf(name),
    // A metrics scrape's slices each wait for the I/O the loop has ready (a 0 ms timer would wait 1 ms).
    yieldToLoop: () => new Promise<void>((resolve) => setImmediate(resolve)),
  };
  // One routing core (balancer, ejection, metrics) for the request handler and the admin endpoints.
  const routing = createRouting(appDeps);
  const accessLog = createAccessLog(
    config.accessLog,
    Math.random,
    batchedLines((chunk) => process.stdout.write(chunk), setImmediate),
  );
  const trustedProxies = config.trustedProxies ?? NO_TRUSTED_PROXIES;
  const handler = new RequestHandler({
    routing,
    accessLog,
    newRequestId,
    tracing,
    trustedProxies,
    dispatchers,
    adminApp: createApp({ ...appDeps, endpoints: "public" }, routing),
  });
  const { metrics } = routing.policy;
  const core: RouterCore = {
    store,
    dispatchers,
    backendTls,
    handler,
    routing,
    adminApp: createApp({ ...appDeps, endpoints: "admin" }, routing),
    trafficHistory,
    sample: () => trafficHistory.record(Date.now(), metrics.red.totals(), metrics.retries),
    stage: routerProxyHeaderStage(config, logger, metrics),
    otel,
    https: undefined,
  };
  return core;
}
