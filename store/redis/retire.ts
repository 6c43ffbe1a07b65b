import type { Cluster, Redis } from "ioredis";
import { clusterKeys, clustersKey } from "../keys.js";

/**
 * KEYS: the cluster's writer fence, then every other key of the cluster; ARGV: the retiring holder. All keys
 * share the cluster's hash tag (one slot on Redis Cluster), so the check and the removal are one step: the
 * fence is still ours, and no sync writes between them.
 */
const RETIRE = `
local holder = redis.call('GET', KEYS[1])
if holder ~= ARGV[1] then return {0, holder or ''} end
local removed = 0
for i = 2, #KEYS do removed = removed + redis.call('DEL', KEYS[i]) end
redis.call('DEL', KEYS[1])
return {1, removed}`;

/** Take the fence only if free: a live sync renews it with every beat, so it is free only once all are gone. */
const TAKE_FENCE = `return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0`;

export type RetireResult =
  | { readonly retired: true; readonly removedKeys: number }
  | { readonly retired: false; readonly holder: string };

/**
 * Removes a cluster from the store for good: its records, heartbeat and lease (the registry, so routers stop
 * listing it) and its name in the clusters set. Fenced: it first takes the cluster's writer fence, as a sync
 * replica would, and only if no replica holds it; a live sync of that name keeps its fence and its records
 * (the result names the holder), and one that starts afterwards simply publishes the cluster again.
 *
 * @example
 * const result = await retireCluster(redis, "edgeslice", "east", "retire:admin");
 */
export async function retireCluster(
  redis: Redis | Cluster,
  prefix: string,
  cluster: string,
  holder: string,
  fenceTtlMs = 30_000,
): Promise<RetireResult> {
  const keys = clusterKeys(prefix, cluster);
  const taken = await redis.eval(TAKE_FENCE, 1, keys.writer, holder, fenceTtlMs);
  if (taken !== 1) return { retired: false, holder: (await redis.get(keys.writer)) ?? "" };
  const others = Object.entries(keys)
    .filter(([name]) => name !== "writer")
    .map(([, key]) => key);
  const reply = (await redis.eval(RETIRE, 1 + others.length, keys.writer, ...others, holder)) as [
    number,
    unknown,
  ];
  if (reply[0] !== 1) return { retired: false, holder: String(reply[1]) };
  await redis.srem(clustersKey(prefix), cluster);
  return { retired: true, removedKeys: Number(reply[1]) };
}
