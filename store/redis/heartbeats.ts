import type { Cluster, Redis } from "ioredis";
import type { WarnOnce } from "../../lib/warn-once.js";
import { clusterKeys } from "../keys.js";
import { decodeHeartbeatRecord, type HeartbeatRecord } from "../records.js";
import type { ClusterHeartbeat } from "../store.js";

/**
 * The heartbeat record of each cluster in `names` (one GET each, sent together: every record lives in its
 * cluster's own slot). A missing record is left out; an invalid one is reported once while it stays so.
 */
export async function readHeartbeats(
  redis: Redis | Cluster,
  prefix: string,
  names: readonly string[],
  warnings: WarnOnce,
): Promise<Map<string, ClusterHeartbeat>> {
  const raws = await Promise.all(names.map((name) => redis.get(clusterKeys(prefix, name).heartbeat)));
  const heartbeats = new Map<string, ClusterHeartbeat>();
  names.forEach((cluster, index) => {
    const raw = raws[index];
    if (raw === null || raw === undefined) return;
    const problem = `heartbeat record ${cluster}`;
    const decoded = decodeHeartbeatRecord(raw);
    if (!decoded.ok) {
      warnings.warn(problem, decoded.error, "ignoring an invalid heartbeat record", {
        cluster,
        error: decoded.error,
      });
      return;
    }
    warnings.clear(problem);
    heartbeats.set(cluster, heartbeatOf(decoded.value));
  });
  return heartbeats;
}

/** What routers keep of a heartbeat record: who beat, when, the API server's state and the cluster's place. */
export function heartbeatOf(record: HeartbeatRecord): ClusterHeartbeat {
  const { holder, at, apiserverUnreachableSince, services, region, location } = record;
  return { holder, at, apiserverUnreachableSince, services, region, location };
}
