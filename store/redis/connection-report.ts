import type { Logger } from "../../lib/logger.js";
import type { RedisClient } from "./client.js";
import { type RedisProblem, redisProblemOf } from "./connection-problems.js";

export interface RedisConnectionReport {
  /** Why the client is not connected, from its last error; undefined while connected or before any error. */
  readonly problem: RedisProblem | undefined;
}

/**
 * Logs a client's connection failures as an operator reads them: one line at error level with the cause and
 * the fix when the connection fails (connection-problems.ts), again only when the cause changes, not on each
 * reconnect, and one info line when it is back. A Redis Cluster client's node errors count as its own.
 *
 * @example
 * const redis = createRedisClient(target, options);
 * reportRedisConnection(redis, describeRedisTarget(target), logger);
 */
export function reportRedisConnection(
  client: RedisClient,
  where: string,
  logger: Logger,
): RedisConnectionReport {
  let problem: RedisProblem | undefined;
  const failed = (error: unknown) => {
    const next = redisProblemOf(error, where);
    if (next.cause !== problem?.cause) logger.error(next.message, { redis: where, cause: next.cause });
    problem = next;
  };
  client.on("error", failed);
  client.on("node error", failed);
  client.on("ready", () => {
    if (problem) logger.info("redis connection ready again", { redis: where });
    problem = undefined;
  });
  return {
    get problem() {
      return problem;
    },
  };
}
