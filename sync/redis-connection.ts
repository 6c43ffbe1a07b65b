import { settlesWithin } from "../lib/async.js";
import { exponentialDelay } from "../lib/backoff.js";
import type { Logger } from "../lib/logger.js";
import { createRedisClient, type RedisClient } from "../store/redis/client.js";
import { describeRedisTarget, type RedisTarget } from "../store/redis/target.js";
import type { SyncMetrics } from "./metrics.js";

/**
 * The sync's one long-lived Redis client, connecting in the background. No offline queue: while Redis is
 * down a write fails at once and the reconciler keeps it dirty with backoff, instead of piling commands up in
 * memory; the caller listens for 'ready' to re-push. Reports redisUp and logs each outage once.
 *
 * @example
 * const redis = connectRedis(config.redis, logger, metrics);
 * redis.on("ready", () => pipeline.repushBeforeBeating());
 * await closeRedis(redis);
 */
export function connectRedis(target: RedisTarget, logger: Logger, metrics: SyncMetrics): RedisClient {
  const redis = createRedisClient(target, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    connectionName: "edgeslice-sync",
    retryStrategy: (attempt) => exponentialDelay(attempt, { initialMs: 100, maxMs: 5_000 }),
  });
  logger.info("redis target", { redis: describeRedisTarget(target) });
  let down = false;
  redis.on("ready", () => {
    metrics.set("redisUp", 1);
    if (down) logger.info("redis connection ready again");
    down = false;
  });
  redis.on("error", (error: Error) => {
    if (!down) logger.warn("redis connection error", { error });
    down = true;
  });
  redis.on("close", () => {
    metrics.set("redisUp", 0);
    down = true;
  });
  redis.connect().catch(() => {
    // Reported through 'error'; retryStrategy keeps reconnecting.
  });
  return redis;
}

/** QUIT when connected (bounded to 2 s), then drop the connection whatever its state. */
export async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status === "ready") await settlesWithin(redis.quit(), 2_000).catch(() => {});
  redis.disconnect();
}
