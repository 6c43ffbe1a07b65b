import { Redis } from "ioredis";
import { afterEach } from "vitest";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";

export type Defer = (...cleanups: (() => Promise<void>)[]) => void;

/**
 * Registers an afterEach that runs, last first, every cleanup the test deferred (servers, clients, keys),
 * whether the test passed or not.
 */
export function cleanupsAfterEach(): Defer {
  let cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups = [];
  });
  return (...more) => {
    cleanups.push(...more);
  };
}

/** A client of the shared Redis and a key prefix of the test's own; the keys go, and the client closes, after it. */
export function sharedRedis(label: string, defer: Defer): { redis: Redis; prefix: string } {
  const prefix = uniquePrefix(label);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  defer(async () => {
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  });
  return { redis, prefix };
}
