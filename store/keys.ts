/**
 * Redis key layout. Every key of one cluster shares the hash tag `{cluster}`, so the atomic
 * per-service write (one script over the fence, services, routes and the change stream) stays in one slot on
 * Redis Cluster, and one ACL key pattern `~<prefix>:{<cluster>}:*` confines a cluster's sync to its keys.
 */
export interface ClusterKeys {
  /** HASH: `ns/name` → ServiceRecord JSON (backends of the exposed port). */
  readonly services: string;
  /** HASH: `ns/name` → RouteRecord JSON (host/path → service, port); small, read by routers to index. */
  readonly routes: string;
  /** STREAM, capped: one entry per change, fields `service` and `op`. */
  readonly changes: string;
  /** STRING, no TTL: HeartbeatRecord JSON; its presence is how routers discover the cluster. */
  readonly heartbeat: string;
  /** STRING with PX = lease: present while the cluster's sync is alive. Server-side expiry, so no clock skew. */
  readonly lease: string;
  /**
   * STRING with PX, the writer fence: the identity of the one replica allowed to write this cluster's keys.
   * Every fenced write checks it atomically (redis/writer.ts); it expires when its holder stops renewing it.
   */
  readonly writer: string;
  /** STRING with PX: the identity of a replica that holds the Kubernetes Lease and waits for the fence. */
  readonly claim: string;
}

export function clusterKeys(prefix: string, cluster: string): ClusterKeys {
  const tag = clusterTag(prefix, cluster);
  return {
    services: `${tag}:services`,
    routes: `${tag}:routes`,
    changes: `${tag}:changes`,
    heartbeat: `${tag}:heartbeat`,
    lease: `${tag}:lease`,
    writer: `${tag}:writer`,
    claim: `${tag}:claim`,
  };
}

/** Glob matching every key of one cluster: its sync user's ACL key pattern. */
export function clusterKeysPattern(prefix: string, cluster: string): string {
  return `${escapeGlob(`${clusterTag(prefix, cluster)}:`)}*`;
}

/** Glob matching every key under `prefix`, of any cluster: the routers' ACL key pattern. */
export function storeKeysPattern(prefix: string): string {
  return `${escapeGlob(prefix)}:*`;
}

/** SCAN MATCH pattern that finds every cluster's heartbeat key. */
export function heartbeatScanPattern(prefix: string): string {
  return `${escapeGlob(prefix)}:{*}:heartbeat`;
}

/** Inverse of `clusterKeys(prefix, c).heartbeat`; undefined for keys of another shape. */
export function clusterFromHeartbeatKey(prefix: string, key: string): string | undefined {
  const head = `${prefix}:{`;
  const tail = "}:heartbeat";
  if (!key.startsWith(head) || !key.endsWith(tail)) return undefined;
  const cluster = key.slice(head.length, key.length - tail.length);
  return cluster.length > 0 && !/[{}]/.test(cluster) ? cluster : undefined;
}

/** Entries kept in each cluster's change stream (approximate trim, `XADD MAXLEN ~`). */
export const CHANGE_STREAM_MAXLEN = 10_000;

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** `<prefix>:{<cluster>}`: the hash tag shared by every key of one cluster. */
function clusterTag(prefix: string, cluster: string): string {
  return `${prefix}:{${cluster}}`;
}
