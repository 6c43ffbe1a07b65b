import type { ChainableCommander, Cluster, Redis } from "ioredis";
import { CHANGE_STREAM_MAXLEN, clusterKeys } from "../keys.js";
import {
  type ChangeOp,
  type HeartbeatRecord,
  routeOf,
  SCHEMA_VERSION,
  type ServiceRecord,
  serializeRouteRecord,
  serializeServiceRecord,
} from "../records.js";
import { assertOwnRecord, type ClusterWriter } from "../store.js";

export interface RedisWriterOptions {
  readonly prefix: string;
  readonly cluster: string;
  /** Entries kept in the change stream (approximate trim); the contract's value unless a test shrinks it. */
  readonly streamMaxLen?: number;
}

/**
 * The sync side of the Redis store (keys.ts layout): the ClusterWriter of one cluster. Every write is one
 * MULTI/EXEC over keys that share the `{cluster}` hash tag, so a reader never sees a record without its route
 * or its change entry, and the transaction stays in one slot on Redis Cluster (a `Cluster` client works as
 * well as a standalone one).
 *
 * @example
 * const writer = createRedisWriter(redis, { prefix: "edgeslice", cluster: "east" });
 * await writer.heartbeat({ holder: "sync-east-0", leaseMs: 30_000, at: Date.now() });
 * await writer.put(record); // record.cluster === "east"
 */
export function createRedisWriter(redis: Redis | Cluster, options: RedisWriterOptions): ClusterWriter {
  const { cluster } = options;
  const keys = clusterKeys(options.prefix, cluster);
  const maxLen = options.streamMaxLen ?? CHANGE_STREAM_MAXLEN;

  const appendChange = (multi: ChainableCommander, service: string, op: ChangeOp) =>
    multi.xadd(keys.changes, "MAXLEN", "~", maxLen, "*", "service", service, "op", op);

  return {
    cluster,
    async put(record: ServiceRecord) {
      assertOwnRecord(cluster, record);
      const multi = redis.multi();
      multi.hset(keys.services, record.service, serializeServiceRecord(record));
      multi.hset(keys.routes, record.service, serializeRouteRecord(routeOf(record)));
      appendChange(multi, record.service, "put");
      await execOrThrow(multi);
    },
    async remove(service: string) {
      const multi = redis.multi();
      multi.hdel(keys.services, service);
      multi.hdel(keys.routes, service);
      appendChange(multi, service, "delete");
      await execOrThrow(multi);
    },
    async load() {
      return new Map(Object.entries(await redis.hgetall(keys.services)));
    },
    async heartbeat({ holder, leaseMs, at, ifRegistered }) {
      const beat: HeartbeatRecord = { v: SCHEMA_VERSION, cluster, holder, at, leaseMs };
      const multi = redis.multi();
      // No TTL on the heartbeat record: routers discover clusters by it. Staleness comes from the lease
      // key alone, expired by Redis itself, so writer and reader clocks never have to agree. XX makes the
      // check for a lost record and the beat one atomic step: a beat can never recreate it on an empty store.
      if (ifRegistered) multi.set(keys.heartbeat, JSON.stringify(beat), "XX");
      else multi.set(keys.heartbeat, JSON.stringify(beat));
      multi.set(keys.lease, holder, "PX", leaseMs);
      const [replaced] = await execOrThrow(multi);
      return replaced === "OK";
    },
  };
}

/**
 * EXEC reports per-command errors in its result instead of rejecting; surface the first one. A command
 * refused while queueing (NOPERM from an ACL) aborts the whole transaction with EXECABORT, whose
 * `previousErrors` hold the actual cause: rethrow that, so the log says why.
 */
async function execOrThrow(multi: ChainableCommander): Promise<unknown[]> {
  let results: Awaited<ReturnType<typeof multi.exec>>;
  try {
    results = await multi.exec();
  } catch (error) {
    const cause = firstPreviousError(error);
    throw cause ? new Error(`${(error as Error).message}: ${cause.message}`, { cause }) : error;
  }
  if (results === null) throw new Error("redis transaction aborted");
  for (const [error] of results) {
    if (error) throw error;
  }
  return results.map(([, value]) => value);
}

function firstPreviousError(error: unknown): Error | undefined {
  if (typeof error !== "object" || error === null || !("previousErrors" in error)) return undefined;
  const previous = (error as { previousErrors: unknown }).previousErrors;
  return Array.isArray(previous) && previous[0] instanceof Error ? previous[0] : undefined;
}
