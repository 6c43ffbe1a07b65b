import { settlesWithin } from "../../lib/async.js";
import { exponentialDelay } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import type { BackendTlsReader } from "../../store/backend-tls.js";
import type { CertificateReader } from "../../store/certificates.js";
import {
  createRedisBackendTlsReader,
  createRedisCertificateReader,
} from "../../store/redis/certificate-reader.js";
import { createRedisClient, type RedisClient, ROUTER_RECONNECT } from "../../store/redis/client.js";
import { reportRedisConnection } from "../../store/redis/connection-report.js";
import { createRedisSnapshotSource, type RedisSnapshotSource } from "../../store/redis/source.js";
import { DEFAULT_REDIS_URL, describeRedisTarget, redisTarget } from "../../store/redis/target.js";
import type { SnapshotSource } from "../../store/store.js";
import type { RouterConfig } from "../core/settings/config.js";

/** How long close() waits for the store reader and the Redis client before cutting them. */
const STORE_CLOSE_MS = 1_000;

/** What the Node router reads its routes and certificates from. */
export interface RouterStore {
  readonly source: SnapshotSource;
  /** The Redis source when the router owns one (for status and tests). */
  readonly redisSource: RedisSnapshotSource | undefined;
  readonly certificates: CertificateReader | undefined;
  /** The backend TLS records (BackendTLSPolicy validations) the HTTPS dispatcher opens TLS to pods with. */
  readonly backendTls: BackendTlsReader | undefined;
  /** Settles when the Redis client first connected or failed to (undefined for a given source). */
  readonly connected: Promise<void> | undefined;
  /**
   * Settles once the first load settled (loaded, or Redis down): certificates and backend TLS records are read
   * for the clusters that load found, so a read before it finds none and waits a whole interval.
   */
  readonly loaded: Promise<void> | undefined;
  /** Closes the reader and the Redis client, each bounded: a Redis that hangs must not hold the shutdown. */
  close(): Promise<void>;
}

export interface RouterStoreDeps {
  readonly logger: Logger;
  readonly now: () => number;
  /** A ready source (e.g. MemoryStore for the all-in-one); default: Redis at config.redis. */
  readonly source?: SnapshotSource | undefined;
  readonly certificates?: CertificateReader | undefined;
  readonly backendTls?: BackendTlsReader | undefined;
  readonly refreshIntervalMs?: number | undefined;
}

/**
 * One long-lived ioredis client with no offline queue (nothing waits on a dead Redis) and the in-memory Redis
 * source over it, unless a source is given. The first load runs in the background: the router listens at once.
 */
export function openRouterStore(config: RouterConfig, deps: RouterStoreDeps): RouterStore {
  const { logger } = deps;
  if (deps.source) {
    return {
      source: deps.source,
      redisSource: undefined,
      certificates: deps.certificates,
      backendTls: deps.backendTls,
      connected: undefined,
      loaded: undefined,
      close: async () => {},
    };
  }
  const target = config.redis ?? redisTarget(DEFAULT_REDIS_URL, false);
  const redis: RedisClient = createRedisClient(target, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => exponentialDelay(attempt, ROUTER_RECONNECT),
    connectionName: "edgeslice-router",
    lazyConnect: true,
  });
  logger.info("redis target", { redis: describeRedisTarget(target) });
  reportRedisConnection(redis, describeRedisTarget(target), logger);
  const connected = redis.connect().catch(() => {
    // Logged by reportRedisConnection, with the cause and the fix; the client keeps reconnecting.
  });
  const redisSource = createRedisSnapshotSource({
    redis,
    prefix: config.prefix,
    logger,
    now: deps.now,
    refreshIntervalMs: deps.refreshIntervalMs,
    budget: config.clusterBudget,
    changesPerSecond: config.clusterChangesPerSecond,
    grantedClusters: config.clusterGrants && new Set(config.clusterGrants.keys()),
  });
  // The first load waits for the connection (or its first failure): sent before, it met a client that was not
  // ready, which refuses commands at once without an offline queue, and every start logged a failed load.
  const loaded = connected
    .then(() => redisSource.start())
    .catch((error) => logger.error("store reader failed to start", { error }));
  // The clusters the snapshot reader found by their heartbeats, not the registry any sync may add names to.
  const clusters = () => redisSource.current()?.clusters.map((cluster) => cluster.name) ?? [];
  return {
    source: redisSource,
    redisSource,
    certificates: createRedisCertificateReader(redis, config.prefix, { clusters }),
    backendTls: createRedisBackendTlsReader(redis, config.prefix, { clusters }),
    connected,
    loaded,
    async close() {
      const sourceClosed = redisSource.close();
      await settlesWithin(sourceClosed, STORE_CLOSE_MS);
      if (
        !(await settlesWithin(
          redis.quit().catch(() => undefined),
          STORE_CLOSE_MS,
        ))
      )
        redis.disconnect();
      // Cut off from Redis, whatever the reader still waited for has failed by now.
      await settlesWithin(sourceClosed, STORE_CLOSE_MS);
    },
  };
}
