import type { Hono } from "hono";
import { Redis } from "ioredis";
import { createJsonLogger, type Logger } from "../../lib/logger.js";
import { loadSnapshot } from "../../store/redis/snapshot.js";
import type { Snapshot } from "../../store/store.js";
import { createApp } from "../app/app.js";
import { parseRouterConfig, type RouterConfig } from "../core/config.js";
import { createFetchUpstream } from "../transports/fetch.js";
import { createWorkerSnapshotSource, type WorkerSnapshotSource } from "./source.js";

/**
 * Cloudflare Workers entry (wrangler.toml). Everything below is built once per isolate and kept in module
 * scope; only the Redis client is per request, because a socket cannot outlive the request that opened it.
 */

/** A fetch-capable binding, e.g. a Workers VPC network binding. */
interface FetchBinding {
  fetch(input: Request | string | URL, init?: RequestInit): Promise<Response>;
}

/** The Worker's environment: the vars and secrets of wrangler.toml, plus the optional VPC binding. */
export interface WorkerEnv {
  readonly [name: string]: unknown;
  /**
   * Workers VPC network binding (Cloudflare Tunnel) for pod traffic. Deployed Workers cannot fetch raw IPs
   * or private ranges, which pod IPs are, so without it only public or (under wrangler dev) loopback
   * backends are reachable.
   */
  readonly POD_NETWORK?: FetchBinding;
}

/** The parts of the Workers ExecutionContext this entry uses; passed on to Hono as its execution context. */
interface WorkerContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
  readonly props: unknown;
}

interface IsolateRuntime {
  readonly source: WorkerSnapshotSource;
  readonly app: Hono;
}

/** How long one Redis round of a snapshot load may take before the isolate gives up on it. */
const REDIS_CONNECT_TIMEOUT_MS = 2_000;

let runtime: IsolateRuntime | undefined;

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: WorkerContext): Promise<Response> {
    if (!runtime) {
      try {
        runtime = createIsolateRuntime(env);
      } catch (error) {
        // A bad var or secret: say which, on every request, instead of an opaque exception.
        console.error(JSON.stringify({ level: "error", msg: "invalid configuration", error: String(error) }));
        return Response.json({ error: "invalid_configuration" }, { status: 500 });
      }
    }
    await runtime.source.prepare((promise) => ctx.waitUntil(promise));
    return runtime.app.fetch(request, env, ctx);
  },
};

function createIsolateRuntime(env: WorkerEnv): IsolateRuntime {
  const config = parseRouterConfig(env);
  const logger = createJsonLogger({
    level: config.logLevel,
    base: { component: "router", runtime: "workers" },
  });
  const source = createWorkerSnapshotSource({
    load: (version) => loadWithOwnClient(config, logger, version),
    ttlMs: config.cacheTtlMs,
    now: Date.now,
    logger,
  });
  const binding = env.POD_NETWORK;
  const fetchFn: typeof fetch = binding
    ? (input, init) => binding.fetch(input instanceof Request ? input : String(input), init)
    : (input, init) => fetch(input, init);
  const app = createApp({
    source,
    // Workers' fetch re-encodes a body it decoded when the response is returned as is (fetch-upstream.ts),
    // and answers a WebSocket handshake with a 101 Response whose webSocket the Worker may return as is.
    upstream: createFetchUpstream(fetchFn, { decodesContentEncoding: false, webSockets: true }),
    config,
    now: Date.now,
    random: Math.random,
    // Isolates share no memory, so in-flight counts for power-of-two-choices would be per isolate and misleading.
    balancing: "random",
    logger,
    // Set by Cloudflare's edge on every request; a client cannot forge it there.
    clientAddress: (c) => c.req.header("cf-connecting-ip"),
  });
  return { source, app };
}

/** Opens a client, reads the whole store, closes it: nothing survives the request (DESIGN.md). */
async function loadWithOwnClient(config: RouterConfig, logger: Logger, version: number): Promise<Snapshot> {
  if (config.redisUrl === undefined)
    throw new Error("REDIS_URL is not set (a secret: npx wrangler secret put REDIS_URL)");
  // Each load opens and closes its own connection; a Cluster client would first map every slot per load.
  if (config.redis?.kind === "cluster")
    throw new Error("REDIS_CLUSTER is not supported on Workers: point REDIS_URL at one Redis endpoint");
  const redis = new Redis(config.redisUrl, {
    lazyConnect: true,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: REDIS_CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  redis.on("error", (error: unknown) => logger.debug("redis client error", { error }));
  try {
    await redis.connect();
    return await loadSnapshot(redis, { prefix: config.prefix, logger, version });
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}
