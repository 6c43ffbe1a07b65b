import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { getRequestListener, type HttpBindings } from "@hono/node-server";
import { listenOn } from "../../lib/listen.js";
import { createJsonLogger, type Logger } from "../../lib/logger.js";
import { processMetrics } from "../../lib/process-metrics.js";
import type { CertificateReader } from "../../store/certificates.js";
import { endpointAddress } from "../../store/records.js";
import type { RedisSnapshotSource } from "../../store/redis/source.js";
import type { SnapshotSource } from "../../store/store.js";
import { type AppDeps, createApp } from "../app/app.js";
import { batchedLines, createAccessLog } from "../core/access-log.js";
import type { RouterConfig } from "../core/config.js";
import { headAnswer } from "../core/head-answers.js";
import { createRequestIds, errorAnswerWithRequestId, requestIdOf } from "../core/request-id.js";
import { createRouting } from "../core/routing.js";
import { TraceIds } from "../core/trace-context.js";
import { propagationOnly } from "../core/tracing.js";
import { TrafficHistory } from "../core/traffic-history.js";
import { NO_TRUSTED_PROXIES } from "../core/trusted-proxies.js";
import { createUndiciUpstream, type UndiciUpstreamOptions } from "../transports/undici.js";
import type { Upstream } from "../transports/upstream.js";
import { createBackendPools } from "./backend-pools.js";
import { clientListenerPort, clientServerName } from "./client-tls.js";
import { connectionFactsOf } from "./connection-facts.js";
import { declinedUpgrade, RouterIncomingMessage } from "./declined-upgrade.js";
import { createDirectRequests } from "./direct-requests.js";
import { withH2Clients } from "./h2-upstream/h2-clients.js";
import { withH2cBackends } from "./h2-upstream/h2c-pools.js";
import type { H2cSettings } from "./h2-upstream/h2c-session.js";
import { withH2ToH1 } from "./http2/h2-to-h1-exchange.js";
import { serveHttp2 } from "./http2/router-http2.js";
import { countingStage } from "./listener-counts.js";
import { createNodeProxy } from "./proxy.js";
import { routerProxyHeaderStage, withConnectionStage } from "./proxy-header-stage.js";
import { RequestHead, requestHeadOf, SERVER_MAX_HEADERS_COUNT, withRequestHead } from "./request-head.js";
import { openRouterStore } from "./router-store.js";
import { type HttpsListener, startRouterHttps } from "./tls/https-listener.js";
import { createOtelTracing } from "./tracing/otel-tracing.js";
import { createNodeUpgrades } from "./upgrade.js";

/** How long close() waits for in-flight requests and upgraded connections; deploy/router sizes its grace period on it. */
export const DEFAULT_DRAIN_MS = 10_000;

export interface NodeRouterDeps {
  readonly logger?: Logger;
  /** A ready source (e.g. MemoryStore for the all-in-one); default: Redis at config.redisUrl. */
  readonly source?: SnapshotSource;
  /**
   * Default: the router's own HTTP/1.1 client (upstream/client.ts) for proxied requests, undici pools for the
   * few the web path sends (HEAD). A custom transport takes the web path for every request.
   */
  readonly upstream?: Upstream;
  readonly upstreamOptions?: UndiciUpstreamOptions;
  /** The h2c upstreams' sessions and streams (docs/configuration.md: H2C_* settings); defaults in h2-upstream/h2c-session.ts. */
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
  /** Tuning of passive ejection (tests); defaults in core/ejection.ts. */
  readonly ejection?: AppDeps["ejection"];
  /** Where HTTPS certificates are read with `source` (a MemoryStore); default: the router's Redis. */
  readonly certificates?: CertificateReader;
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
  /**
   * Stops accepting, drains in-flight requests up to `drainMs`, then cuts what is left (upgraded
   * connections included) and closes pools and Redis.
   */
  close(): Promise<void>;
}

/**
 * Wires the Node router: the store (router-store.ts), its own upstream client (lib/http1/, h2-upstream/) for
 * the native proxy (proxy.ts) and undici pools for the web path, the Hono app on @hono/node-server, the upgrade
 * listener (upgrade.ts) and HTTP/2 (http2/) on the same routing core, HTTPS (tls/) when TLS_STORE_KEY is set, and
 * a second listener on ADMIN_PORT for the admin endpoints over the same core (the public one answers only the
 * probes under /_edgeslice/). It listens at once: the first store load runs in the background (a Redis that
 * hangs, or a peer that accepts and never answers,
 * never delays it), and until a snapshot loads healthz and requests answer 503 no_snapshot.
 */
export async function startNodeRouter(config: RouterConfig, deps: NodeRouterDeps = {}): Promise<NodeRouter> {
  const logger = deps.logger ?? createJsonLogger({ level: config.logLevel, base: { component: "router" } });
  const now = deps.now ?? Date.now;
  const store = openRouterStore(config, {
    logger,
    now,
    source: deps.source,
    certificates: deps.certificates,
    refreshIntervalMs: deps.refreshIntervalMs,
  });
  const { source, redisSource } = store;
  const ownedUpstream = deps.upstream ? undefined : createUndiciUpstream(deps.upstreamOptions);
  // HTTP/1.1 backends over the router's own client, h2c ones over node:http2 sessions (h2-upstream/).
  const client = ownedUpstream
    ? withH2cBackends(createBackendPools(deps.upstreamOptions), { ...config.h2c, ...deps.h2c })
    : undefined;
  const upstream = deps.upstream ?? ownedUpstream;
  if (!upstream) throw new Error("no upstream transport");

  const newRequestId = createRequestIds(randomBytes);
  const trusted = config.trustedProxies ?? NO_TRUSTED_PROXIES;
  const traceIds = new TraceIds((bytes) => randomBytes(bytes).toString("hex"));
  const otel = config.tracing ? createOtelTracing(config.tracing, traceIds) : undefined;
  const tracing = otel ?? propagationOnly(traceIds);
  const trafficHistory = new TrafficHistory();
  const appDeps: AppDeps = {
    trafficHistory,
    processFamilies: () => [...processMetrics().families(), ...(https?.families() ?? [])],
    newRequestId,
    tracing,
    source,
    upstream,
    config,
    now,
    random: deps.random ?? Math.random,
    balancing: "p2c",
    logger,
    clientAddress: (c) => {
      const socket = (c.env as HttpBindings | undefined)?.incoming?.socket;
      return socket && connectionFactsOf(socket, trusted).clientIp;
    },
    clientTrusted: (c) => {
      const socket = (c.env as HttpBindings | undefined)?.incoming?.socket;
      return socket !== undefined && connectionFactsOf(socket, trusted).trustedPeer;
    },
    requestHeaders: (c) => {
      const incoming = (c.env as HttpBindings | undefined)?.incoming;
      return incoming ? requestHeadOf(incoming) : { get: (name: string) => c.req.header(name) ?? null };
    },
    incomingRequestId: (c) => {
      const incoming = (c.env as HttpBindings | undefined)?.incoming;
      return incoming ? requestHeadOf(incoming).requestId : c.req.header("x-request-id");
    },
    accessLog: createAccessLog(
      config.accessLog,
      Math.random,
      batchedLines((chunk) => process.stdout.write(chunk), setImmediate),
    ),
    // The scheme of the connection, never of an absolute-form request target.
    clientProto: (c) =>
      ((c.env as HttpBindings | undefined)?.incoming?.socket as Partial<TLSSocket> | undefined)?.encrypted
        ? "https"
        : "http",
    clientServerName: (c) => clientServerName((c.env as HttpBindings | undefined)?.incoming?.socket),
    clientListenerPort: (c) => clientListenerPort((c.env as HttpBindings | undefined)?.incoming?.socket),
    clientProtocol: (c) => (c.env as HttpBindings | undefined)?.incoming?.httpVersion,
    // Our own client: proxy natively on Node's objects (a custom transport takes the web path).
    ...(client ? { native: withH2Clients(withH2ToH1(createNodeProxy(client), client), client) } : {}),
    ...(deps.ejection ? { ejection: deps.ejection } : {}),
    // The routing core's 421 rule compares the certificates the SNI and the routed host get (core/misdirected.ts).
    certificateOf: (name) => https?.certificateOf(name),
    // A metrics scrape's slices each wait for the I/O the loop has ready (a 0 ms timer would wait 1 ms).
    yieldToLoop: () => new Promise<void>((resolve) => setImmediate(resolve)),
  };
  // One routing core (balancer, ejection, metrics) for the Hono app and the upgrade path.
  const routing = createRouting(appDeps);
  const app = createApp({ ...appDeps, endpoints: "public" }, routing);
  const adminApp = createApp({ ...appDeps, endpoints: "admin" }, routing);
  const { metrics } = routing.policy;
  // @hono/node-server's listener, as createAdaptorServer builds it; requests Node read only in part, or with
  // two Hosts (request-head.ts), are refused before the adapter reads their Host and framing one way while a
  // backend might read them another.
  const listener = getRequestListener(app.fetch);
  // Our own client: proxied requests go straight from Node's listener (direct-requests.ts), the rest to the app.
  const direct = client
    ? createDirectRequests({
        routing,
        transport: client,
        accessLog: appDeps.accessLog,
        newRequestId,
        trustedProxies: trusted,
        tracing,
      })
    : undefined;
  let https: HttpsListener | undefined;
  const server = createServer({ IncomingMessage: RouterIncomingMessage }, (incoming, outgoing) => {
    if (declinedUpgrade(incoming)) outgoing.shouldKeepAlive = false;
    const head = new RequestHead(incoming.rawHeaders);
    const problem = head.problem;
    if (problem === undefined) {
      if (direct?.(incoming, outgoing, head)) return;
      return listener(withRequestHead(incoming, head), outgoing);
    }
    const requestId = requestIdOf(head.requestId, newRequestId);
    const full = errorAnswerWithRequestId(problem, requestId);
    const answer = incoming.method === "HEAD" ? headAnswer(full) : full;
    // Refused before any routing: no service, and no time worth measuring.
    metrics.respond(metrics.red.unrouted, incoming.method ?? "GET", answer.status, 0);
    outgoing.writeHead(answer.status, Object.fromEntries(answer.headers));
    outgoing.end(answer.body);
  });
  server.maxHeadersCount = SERVER_MAX_HEADERS_COUNT;
  // Both above a load balancer's idle timeout, so it closes an idle connection before the router does (config.ts).
  server.keepAliveTimeout = config.clientKeepAliveTimeoutMs;
  server.headersTimeout = config.clientHeadersTimeoutMs;
  const drainMs = deps.drainMs ?? DEFAULT_DRAIN_MS;
  const http2 = serveHttp2({ server, listener, newRequestId, metrics, config, logger, drainMs });
  const upgrades = createNodeUpgrades(routing, appDeps.accessLog, trusted, tracing);
  // Each connection counted, then (PROXY_PROTOCOL) a trusted balancer's header read, before the h2c split and TLS.
  const stage = routerProxyHeaderStage(config, logger, metrics);
  withConnectionStage(server, countingStage(metrics.listeners, "http", stage));
  server.on("upgrade", upgrades.listener);
  const host = deps.host ?? "0.0.0.0";
  await listenOn(server, { port: config.port, host }, { port: "PORT", host: "HOST" });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${endpointAddress({ ip: host, port })}`;
  const adminServer = createServer(getRequestListener(adminApp.fetch));
  const adminHost = deps.adminHost ?? config.adminHost ?? host;
  try {
    await listenOn(
      adminServer,
      { port: config.adminPort, host: adminHost },
      { port: "ADMIN_PORT", host: "ADMIN_HOST" },
    );
  } catch (error) {
    server.close();
    throw error;
  }
  try {
    https = await startRouterHttps(config, {
      reader: store.certificates,
      httpServer: server,
      http2Front: http2.front,
      host,
      logger,
      passthrough: { routing, source },
      storeReady: store.connected,
      connectionStage: countingStage(metrics.listeners, "https", stage),
    });
  } catch (error) {
    server.close();
    adminServer.close();
    throw error;
  }
  const adminPort = (adminServer.address() as AddressInfo).port;
  const adminUrl = `http://${endpointAddress({ ip: adminHost, port: adminPort })}`;
  logger.info("router listening", { url, adminUrl });
  // The dashboard's last minutes fill whether or not anyone watches; a sample reads the counters, no request.
  const sampling = setInterval(
    () => trafficHistory.record(Date.now(), metrics.red.totals(), metrics.retries),
    trafficHistory.intervalMs,
  );
  sampling.unref();

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      clearInterval(sampling);
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      const http2Drained = http2.close();
      // Its ports' connections: passed-through ones are cut with the upgrades at the bound.
      const httpsDrained = https?.close();
      // Admin answers are short: an idle scrape connection is closed now, a busy one when the drain ends.
      adminServer.close();
      adminServer.closeIdleConnections();
      // A keep-alive connection turns idle when its last response ends; close those as they appear.
      server.closeIdleConnections();
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      // Upgraded connections (WebSockets) are no longer the HTTP server's: closeAllConnections misses them.
      const bound = setTimeout(() => {
        server.closeAllConnections();
        upgrades.destroyAll();
        https?.destroyAll();
      }, drainMs);
      await Promise.all([drained, http2Drained, httpsDrained]);
      adminServer.closeAllConnections();
      clearInterval(sweep);
      clearTimeout(bound);
      await Promise.all([ownedUpstream?.destroy(), client?.destroy()]);
      await store.close();
      await otel?.shutdown();
      logger.info("router stopped");
    })();
    return closing;
  };
  return { url, port, server, adminUrl, adminPort, adminServer, redisSource, https, close };
}
