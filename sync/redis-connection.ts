import { settlesWithin } from "../lib/async.js";
import { exponentialDelay } from "../lib/backoff.js";
import type { Logger } from "../lib/logger.js";
import { createRedisClient, type RedisClient } from "../store/redis/client.js";
import { type RedisProblem, redisProblemOf } from "../store/redis/connection-problems.js";
import { reportRedisConnection } from "../store/redis/connection-report.js";
import { describeRedisTarget, type RedisTarget } from "../store/redis/target.js";
import type { SyncMetrics } from "./metrics.js";

/**
 * The sync's one long-lived Redis client, connecting in the background. No offline queue: while Redis is
 * down a write fails at once and the reconciler keeps it dirty with backoff, instead of piling commands up in
 * memory; the caller listens for 'ready' to re-push. Reports redisUp, and each cause of an outage once, at
 * error level with its fix (store/redis/connection-report.ts).
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
  reportRedisConnection(redis, describeRedisTarget(target), logger);
  redis.on("ready", () => metrics.set("redisUp", 1));
  redis.on("close", () => metrics.set("redisUp", 0));
  redis.connect().catch(() => {
    // Reported through 'error'; retryStrategy keeps reconnecting.
  });
  return redis;
}

/**
 * Waits up to `limitMs` for a client of connectRedis to be ready: undefined once it is, else why not. A cause
 * only a setting cures (a wrong password) ends the wait at once. connectRedis has logged every cause that came
 * as an error; a Redis that accepted the connection and never answered is logged here.
 */
export function untilRedisReady(
  redis: RedisClient,
  target: RedisTarget,
  limitMs: number,
  logger: Logger,
): Promise<RedisProblem | undefined> {
  if (redis.status === "ready") return Promise.resolve(undefined);
  const where = describeRedisTarget(target);
  return new Promise((resolve) => {
    let last: RedisProblem | undefined;
    const done = (problem: RedisProblem | undefined) => {
      clearTimeout(timer);
      redis.off("ready", ready);
      redis.off("error", failed);
      redis.off("node error", failed);
      resolve(problem);
    };
    const ready = () => done(undefined);
    const failed = (error: unknown) => {
      last = redisProblemOf(error, where);
      if (last.configuration) done(last);
    };
    const timer = setTimeout(() => {
      if (last) return done(last);
      const silent: RedisProblem = {
        cause: "no answer",
        message: `REDIS_URL: Redis at ${where} did not answer within ${limitMs} ms: is it Redis, and if it expects TLS, does REDIS_URL start with rediss://?`,
        configuration: false,
      };
      logger.error(silent.message, { redis: where, cause: silent.cause });
      done(silent);
    }, limitMs);
    redis.on("ready", ready);
    redis.on("error", failed);
    redis.on("node error", failed);
  });
}

/** QUIT when connected (bounded to 2 s), then drop the connection whatever its state. */
export async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status === "ready") await settlesWithin(redis.quit(), 2_000).catch(() => {});
  redis.disconnect();
}
