import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { getRequestListener, type HttpBindings } from "@hono/node-server";
import { settlesWithin } from "../../lib/async.js";
import { exponentialDelay } from "../../lib/backoff.js";
import { listenOn } from "../../lib/listen.js";
import { createJsonLogger, type Logger } from "../../lib/logger.js";
import { processMetrics } from "../../lib/process-metrics.js";
import type { CertificateReader } from "../../store/certificates.js";
import { endpointAddress } from "../../store/records.js";
import { createRedisCertificateReader } from "../../store/redis/certificate-reader.js";
import { createRedisClient, type RedisClient, ROUTER_RECONNECT } from "../../store/redis/client.js";
import { reportRedisConnection } from "../../store/redis/connection-report.js";
import { createRedisSnapshotSource, type RedisSnapshotSource } from "../../store/redis/source.js";
import { describeRedisTarget, redisTarget } from "../../store/redis/target.js";
import type { SnapshotSource } from "../../store/store.js";
import { type AppDeps, createApp } from "../app/app.js";
import { batchedLines, createAccessLog } from "../core/access-log.js";
import type { RouterConfig } from "../core/config.js";
import { createRequestIds, errorAnswerWithRequestId, requestIdOf } from "../core/request-id.js";
import { createRouting } from "../core/routing.js";
import { TrafficHistory } from "../core/traffic-history.js";
import { createUndiciUpstream, type UndiciUpstreamOptions } from "../transports/undici.js";
import type { Upstream } from "../transports/upstream.js";
import { createBackendPools } from "./backend-pools.js";
import { createDirectRequests } from "./direct-requests.js";
import { withH2Clients } from "./h2-upstream/h2-clients.js";
import { withH2cBackends } from "./h2-upstream/h2c-pools.js";
import type { H2cSettings } from "./h2-upstream/h2c-session.js";
import { withH2ToH1 } from "./http2/h2-to-h1-exchange.js";
import { serveHttp2 } from "./http2/router-http2.js";
import { createNodeProxy } from "./proxy.js";
import { RequestHead, requestHeadOf, SERVER_MAX_HEADERS_COUNT, withRequestHead } from "./request-head.js";
import { type HttpsListener, startRouterHttps } from "./tls/https-listener.js";
import { createNodeUpgrades } from "./upgrade.js";

export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

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
  /** The h2c upstreams' sessions and streams (README: H2C_* settings); defaults in h2-upstream/h2c-session.ts. */
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

/** How long close() waits for the store reader and the Redis client before cutting them. */
const STORE_CLOSE_MS = 1_000;

/**
 * Wires the Node router: one long-lived ioredis client (no offline queue, so nothing waits on a dead Redis),
 * the in-memory Redis source, its own upstream client (upstream/) for the native proxy (proxy.ts) and undici
 * pools for the web path, the Hono app on @hono/node-server, and the upgrade listener (upgrade.ts) on the same
 * routing core, and a second listener on ADMIN_PORT for the admin endpoints over the same core (the public one
 * answers only the probes under /_edgeslice/). It listens at once: the first store load runs in the background (a Redis that hangs, or a peer that accepts and never answers,
 * never delays it), and until a snapshot loads healthz and requests answer 503 no_snapshot.
 */
export async function startNodeRouter(config: RouterConfig, deps: NodeRouterDeps = {}): Promise<NodeRouter> {
  const logger = deps.logger ?? createJsonLogger({ level: config.logLevel, base: { component: "router" } });
  const now = deps.now ?? Date.now;
  let redis: RedisClient | undefined;
  let redisSource: RedisSnapshotSource | undefined;
  let source = deps.source;
  let connected: Promise<void> | undefined;
  if (!source) {
    const target = config.redis ?? redisTarget(DEFAULT_REDIS_URL, false);
    redis = createRedisClient(target, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => exponentialDelay(attempt, ROUTER_RECONNECT),
      connectionName: "edgeslice-router",
      lazyConnect: true,
    });
    logger.info("redis target", { redis: describeRedisTarget(target) });
    reportRedisConnection(redis, describeRedisTarget(target), logger);
    connected = redis.connect().catch(() => {
      // Logged by reportRedisConnection, with the cause and the fix; the client keeps reconnecting.
    });
    redisSource = createRedisSnapshotSource({
      redis,
      prefix: config.prefix,
      logger,
      now,
      refreshIntervalMs: deps.refreshIntervalMs,
    });
    // The first load waits for the connection (or its first failure): sent before, it met a client that was not
    // ready, which refuses commands at once without an offline queue, and every start logged a failed load.
    const starting = redisSource;
    void connected
      .then(() => starting.start())
      .catch((error) => logger.error("store reader failed to start", { error }));
    source = redisSource;
  }
  const ownedUpstream = deps.upstream ? undefined : createUndiciUpstream(deps.upstreamOptions);
  // HTTP/1.1 backends over the router's own client, h2c ones over node:http2 sessions (h2-upstream/).
  const client = ownedUpstream
    ? withH2cBackends(createBackendPools(deps.upstreamOptions), { ...config.h2c, ...deps.h2c })
    : undefined;
  const upstream = deps.upstream ?? ownedUpstream;
  if (!upstream) throw new Error("no upstream transport");

  const newRequestId = createRequestIds(randomBytes);
  const trafficHistory = new TrafficHistory();
  const appDeps: AppDeps = {
    trafficHistory,
    processFamilies: () => [...processMetrics().families(), ...(https?.families() ?? [])],
    newRequestId,
    source,
    upstream,
    config,
    now,
    random: deps.random ?? Math.random,
    balancing: "p2c",
    logger,
    clientAddress: (c) => (c.env as HttpBindings | undefined)?.incoming?.socket.remoteAddress,
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
    clientProtocol: (c) => (c.env as HttpBindings | undefined)?.incoming?.httpVersion,
    // Our own client: proxy natively on Node's objects (a custom transport takes the web path).
    ...(client ? { native: withH2Clients(withH2ToH1(createNodeProxy(client), client), client) } : {}),
    ...(deps.ejection ? { ejection: deps.ejection } : {}),
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
      })
    : undefined;
  let https: HttpsListener | undefined;
  const server = createServer((incoming, outgoing) => {
    const head = new RequestHead(incoming.rawHeaders);
    const problem = head.problem ?? https?.problemOf(incoming, head.host);
    if (problem === undefined) {
      if (direct?.(incoming, outgoing, head)) return;
      return listener(withRequestHead(incoming, head), outgoing);
    }
    const requestId = requestIdOf(head.requestId, newRequestId);
    const answer = errorAnswerWithRequestId(problem, requestId);
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
  const http2Deps = { server, listener, newRequestId, metrics, config, logger, drainMs };
  const http2 = serveHttp2({ ...http2Deps, problemOf: (incoming, host) => https?.problemOf(incoming, host) });
  const upgrades = createNodeUpgrades(routing, appDeps.accessLog);
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
    const reader = redis ? createRedisCertificateReader(redis, config.prefix) : deps.certificates;
    https = await startRouterHttps(config, {
      reader,
      httpServer: server,
      http2Front: http2.front,
      host,
      logger,
      storeReady: connected,
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
      void https?.close();
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
      }, drainMs);
      await Promise.all([drained, http2Drained]);
      adminServer.closeAllConnections();
      clearInterval(sweep);
      clearTimeout(bound);
      await Promise.all([ownedUpstream?.destroy(), client?.destroy()]);
      // A Redis that hangs (or never answered) must not hold the shutdown: bounded, then cut.
      const sourceClosed = redisSource?.close() ?? Promise.resolve();
      await settlesWithin(sourceClosed, STORE_CLOSE_MS);
      if (
        redis &&
        !(await settlesWithin(
          redis.quit().catch(() => undefined),
          STORE_CLOSE_MS,
        ))
      ) {
        redis.disconnect();
      }
      // Cut off from Redis, whatever the reader still waited for has failed by now.
      await settlesWithin(sourceClosed, STORE_CLOSE_MS);
      logger.info("router stopped");
    })();
    return closing;
  };
  return { url, port, server, adminUrl, adminPort, adminServer, redisSource, https, close };
}
