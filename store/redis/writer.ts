import { createHash } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import { CHANGE_STREAM_MAXLEN, clusterKeys } from "../keys.js";
import {
  type HeartbeatRecord,
  routeOf,
  SCHEMA_VERSION,
  type ServiceRecord,
  serializeRouteRecord,
  serializeServiceRecord,
} from "../records.js";
import {
  assertOwnRecord,
  type ClusterWriter,
  type FenceOptions,
  FenceRefusedError,
  type WriterFence,
} from "../store.js";

export interface RedisWriterOptions {
  readonly prefix: string;
  readonly cluster: string;
  /** Entries kept in the change stream (approximate trim); the contract's value unless a test shrinks it. */
  readonly streamMaxLen?: number;
  /** Makes every write fenced (store.ts ClusterWriter.fence); left out, writes ignore the fence. */
  readonly fence?: FenceOptions;
}

/**
 * Every write is one Lua script (EVALSHA, EVAL when the server does not know it yet) over keys that share the
 * `{cluster}` hash tag: the fence check and the write are one atomic step, a reader never sees a record
 * without its route or its change entry, and the script stays in one slot on Redis Cluster. KEYS[1] is the
 * fence and KEYS[2] the claim in each; ARGV[1] the holder ('' = unfenced) and ARGV[2] the fence's TTL.
 * A refused write returns {0, holder}; a done one {1 or 2, claimant or ''}.
 */
const FENCE = `
local function fence()
  if ARGV[1] == '' then return false end
  local holder = redis.call('GET', KEYS[1])
  if holder and holder ~= ARGV[1] then return holder end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return false
end
local function claimant()
  local claim = redis.call('GET', KEYS[2])
  if claim and claim ~= ARGV[1] then return claim end
  return ''
end
local refused = fence()
if refused then return {0, refused} end
`;

/** KEYS: fence, claim, services, routes, changes; ARGV: holder, ttl, service, record, route, maxlen. */
const PUT = `${FENCE}
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[5])
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[6], '*', 'service', ARGV[3], 'op', 'put')
return {1, claimant()}`;

/** KEYS: fence, claim, services, routes, changes; ARGV: holder, ttl, service, maxlen. */
const REMOVE = `${FENCE}
redis.call('HDEL', KEYS[3], ARGV[3])
redis.call('HDEL', KEYS[4], ARGV[3])
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[4], '*', 'service', ARGV[3], 'op', 'delete')
return {1, claimant()}`;

/**
 * KEYS: fence, claim, heartbeat, lease; ARGV: holder, ttl, record, lease holder, lease ms, '1' = only replace.
 * No TTL on the heartbeat record: routers discover clusters by it. Staleness comes from the lease key alone,
 * expired by Redis itself, so writer and reader clocks never have to agree. XX makes the check for a lost
 * record and the beat one atomic step: a beat can never recreate it on an empty store. Returns 2 for that.
 */
const HEARTBEAT = `${FENCE}
local written
if ARGV[6] == '1' then written = redis.call('SET', KEYS[3], ARGV[3], 'XX')
else written = redis.call('SET', KEYS[3], ARGV[3]) end
redis.call('SET', KEYS[4], ARGV[4], 'PX', ARGV[5])
if written then return {1, claimant()} end
return {2, claimant()}`;

/** KEYS: fence, claim; ARGV: holder, ttl, claim ms. Takes or renews the fence, else claims it. */
const ACQUIRE = `
local holder = redis.call('GET', KEYS[1])
if (not holder) or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  local claim = redis.call('GET', KEYS[2])
  if claim == ARGV[1] then redis.call('DEL', KEYS[2]) return {1, ''} end
  if claim then return {1, claim} end
  return {1, ''}
end
if tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3]) end
return {0, holder}`;

/** KEYS: fence; ARGV: holder. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0`;

interface Script {
  readonly text: string;
  readonly sha: string;
}

const script = (text: string): Script => ({ text, sha: createHash("sha1").update(text).digest("hex") });
const SCRIPTS = {
  put: script(PUT),
  remove: script(REMOVE),
  heartbeat: script(HEARTBEAT),
  acquire: script(ACQUIRE),
  release: script(RELEASE),
};

/**
 * The sync side of the Redis store (keys.ts layout): the ClusterWriter of one cluster, a `Cluster` client
 * working as well as a standalone one.
 *
 * @example
 * const writer = createRedisWriter(redis, { prefix: "edgeslice", cluster: "east",
 *   fence: { holder: "sync-east-0", ttlMs: 15_000 } });
 * await writer.fence?.acquire(15_000);     // { held: true }, or who holds it
 * await writer.heartbeat({ holder: "sync-east-0", leaseMs: 30_000, at: Date.now() });
 * await writer.put(record);               // record.cluster === "east"
 */
export function createRedisWriter(redis: Redis | Cluster, options: RedisWriterOptions): ClusterWriter {
  const { cluster } = options;
  const keys = clusterKeys(options.prefix, cluster);
  const maxLen = options.streamMaxLen ?? CHANGE_STREAM_MAXLEN;
  if (options.fence && !(options.fence.ttlMs >= 1 && options.fence.holder !== "")) {
    throw new Error("a writer fence needs a holder and a TTL of at least 1 ms");
  }
  const holder = options.fence?.holder ?? "";
  const ttlMs = options.fence?.ttlMs ?? 0;
  let claimant: string | undefined;

  /** Runs a fenced script; resolves its status (1, or 2 from a heartbeat) or rejects a refused write. */
  const fenced = async (which: Script, moreKeys: string[], args: (string | number)[]) => {
    const reply = await run(redis, which, [keys.writer, keys.claim, ...moreKeys], [holder, ttlMs, ...args]);
    const [status, who] = reply as [number, string];
    if (status === 0) throw new FenceRefusedError(cluster, who);
    claimant = who === "" ? undefined : who;
    return status;
  };

  const fence: WriterFence | undefined = options.fence && {
    holder,
    ttlMs,
    get claimant() {
      return claimant;
    },
    async acquire(claimMs) {
      const reply = await run(redis, SCRIPTS.acquire, [keys.writer, keys.claim], [holder, ttlMs, claimMs]);
      const [status, who] = reply as [number, string];
      if (status === 0) return { held: false, holder: who };
      claimant = who === "" ? undefined : who;
      return { held: true };
    },
    async holderNow() {
      return (await redis.get(keys.writer)) ?? undefined;
    },
    async release() {
      return (await run(redis, SCRIPTS.release, [keys.writer], [holder])) === 1;
    },
  };

  return {
    cluster,
    ...(fence ? { fence } : {}),
    async put(record: ServiceRecord) {
      assertOwnRecord(cluster, record);
      await fenced(
        SCRIPTS.put,
        [keys.services, keys.routes, keys.changes],
        [record.service, serializeServiceRecord(record), serializeRouteRecord(routeOf(record)), maxLen],
      );
    },
    async remove(service: string) {
      await fenced(SCRIPTS.remove, [keys.services, keys.routes, keys.changes], [service, maxLen]);
    },
    async load() {
      return new Map(Object.entries(await redis.hgetall(keys.services)));
    },
    async heartbeat(beat) {
      const record: HeartbeatRecord = {
        v: SCHEMA_VERSION,
        cluster,
        holder: beat.holder,
        at: beat.at,
        leaseMs: beat.leaseMs,
        ...(beat.apiserverUnreachableSince === undefined
          ? {}
          : { apiserverUnreachableSince: beat.apiserverUnreachableSince }),
      };
      const status = await fenced(
        SCRIPTS.heartbeat,
        [keys.heartbeat, keys.lease],
        [JSON.stringify(record), beat.holder, beat.leaseMs, beat.ifRegistered ? "1" : "0"],
      );
      return status === 1;
    },
  };
}

/**
 * EVALSHA, and EVAL when the server answers NOSCRIPT (it restarted, or never saw the script): the script
 * cache is per node and empties on restart, so the fallback is the normal path once per node and restart.
 */
async function run(
  redis: Redis | Cluster,
  which: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(which.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
    return redis.eval(which.text, keys.length, ...keys, ...args);
  }
}
