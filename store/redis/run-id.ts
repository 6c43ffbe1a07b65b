import type { Cluster, Redis } from "ioredis";
import { isClusterClient } from "./snapshot.js";

/** Stands in for run_id on Redis Cluster, which has no single instance to identify. */
const CLUSTER_RUN_ID = "redis-cluster";

/**
 * The Redis instance's run_id (INFO server): a new one means a restarted Redis that may have lost every key
 * without a change entry saying so.
 */
export async function readRunId(redis: Redis | Cluster): Promise<string | undefined> {
  if (isClusterClient(redis)) return CLUSTER_RUN_ID;
  const info = await redis.info("server");
  return /^run_id:(\S+)/m.exec(info)?.[1];
}
