import type { Cluster, Redis } from "ioredis";
import type { WarnOnce } from "../../lib/warn-once.js";
import { clusterKeys } from "../keys.js";
import { decodeHeartbeatRecord, type HeartbeatRecord } from "../records.js";
import type { ClusterHeartbeat } from "../store.js";

/**
 * A heartbeat record is a few hundred bytes; one longer than this is refused, and never read whole: it is read
 * every refresh, and its cluster writes it.
 */
export const MAX_HEARTBEAT_BYTES = 4_096;

/**
 * The heartbeat record of each cluster in `names` (one GETRANGE each of at most MAX_HEARTBEAT_BYTES + 1 bytes,
 * sent together: every record lives in its cluster's own slot). A missing record is left out; an invalid or
 * oversized one is reported once while it stays so.
 */
export async function readHeartbeats(
  redis: Redis | Cluster,
  prefix: string,
  names: readonly string[],
  warnings: WarnOnce,
): Promise<Map<string, ClusterHeartbeat>> {
  const raws = await Promise.all(
    names.map((name) => redis.getrange(clusterKeys(prefix, name).heartbeat, 0, MAX_HEARTBEAT_BYTES)),
  );
  const heartbeats = new Map<string, ClusterHeartbeat>();
  names.forEach((cluster, index) => {
    const raw = raws[index];
    // GETRANGE of a missing key is "": a heartbeat record is never empty.
    if (raw === undefined || raw === "") return;
    const heartbeat = decodedHeartbeat(cluster, raw, warnings, MAX_HEARTBEAT_BYTES);
    if (heartbeat) heartbeats.set(cluster, heartbeat);
  });
  return heartbeats;
}

/**
 * A heartbeat record as a reader read it: what it says, or undefined when it does not decode or is longer than
 * `maxBytes` (reported once while it stays so; the Node reader reads at most MAX_HEARTBEAT_BYTES + 1 bytes).
 */
export function decodedHeartbeat(
  cluster: string,
  raw: string,
  warnings: WarnOnce | undefined,
  maxBytes = Number.POSITIVE_INFINITY,
): ClusterHeartbeat | undefined {
  const problem = `heartbeat record ${cluster}`;
  const decoded: ReturnType<typeof decodeHeartbeatRecord> =
    raw.length > maxBytes
      ? { ok: false, error: `longer than ${maxBytes} bytes` }
      : decodeHeartbeatRecord(raw);
  if (!decoded.ok) {
    warnings?.warn(problem, decoded.error, "ignoring an invalid heartbeat record", {
      cluster,
      error: decoded.error,
    });
    return undefined;
  }
  warnings?.clear(problem);
  return heartbeatOf(decoded.value);
}

/** What routers keep of a heartbeat record: who beat, when, the API server's state and the cluster's place. */
export function heartbeatOf(record: HeartbeatRecord): ClusterHeartbeat {
  const { holder, at, apiserverUnreachableSince, services, region, location } = record;
  return { holder, at, apiserverUnreachableSince, services, region, location };
}
