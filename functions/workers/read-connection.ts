import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "../../lib/logger.js";
import type { RouterConfig } from "../core/settings/config.js";
import type { PipelineConnection } from "./delta-reader.js";

/** How long one Redis round of a snapshot load may take before the isolate gives up on it. */
const REDIS_CONNECT_TIMEOUT_MS = 2_000;

/**
 * One connection for the delta reader (delta-reader.ts), opened for one read and closed by it. No HELLO, no
 * ready check (INFO), no CLIENT SETINFO and no QUIT: each would be one more round trip on every read of every isolate.
 */
export async function openPipelineConnection(
  config: RouterConfig,
  logger: Logger,
): Promise<PipelineConnection> {
  const redis = oneReadClient(config, logger, {
    enableReadyCheck: false,
    disableClientInfo: true,
    // RESP2: no HELLO turn before the first command (RESP3 brings nothing these reads use).
    protocol: 2,
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  return {
    async run(commands) {
      const results = await redis.pipeline(commands.map((command) => [...command])).exec();
      if (!results || results.length !== commands.length)
        throw new Error("redis pipeline returned no results");
      // A reply error (WRONGTYPE) belongs to one key and is the caller's to judge; anything else means the
      // store is unreachable, and the whole read fails (fail static).
      const lost = results.find(([error]) => error !== null && error.name !== "ReplyError")?.[0];
      if (lost) throw lost;
      return results;
    },
    close: () => redis.disconnect(),
  };
}

/**
 * A client for one read of an isolate, not yet connected: no retries, no offline queue, bounded waits. Each read
 * opens and closes its own connection (a socket cannot outlive its request), so a Cluster client, which first
 * maps every slot, is refused.
 */
export function oneReadClient(config: RouterConfig, logger: Logger, extra: RedisOptions): Redis {
  if (config.redisUrl === undefined)
    throw new Error("REDIS_URL is not set (a secret: npx wrangler secret put REDIS_URL)");
  if (config.redis?.kind === "cluster")
    throw new Error("REDIS_CLUSTER is not supported on Workers: point REDIS_URL at one Redis endpoint");
  const redis = new Redis(config.redisUrl, {
    lazyConnect: true,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: REDIS_CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    ...extra,
  });
  redis.on("error", (error: unknown) => logger.debug("redis client error", { error }));
  return redis;
}
