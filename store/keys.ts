/**
 * Redis key layout. Every key of one cluster shares the hash tag `{cluster}`, so the atomic
 * per-service write (MULTI over services, routes and the change stream) stays in one slot on
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
}

export function clusterKeys(prefix: string, cluster: string): ClusterKeys {
  const tag = `${prefix}:{${cluster}}`;
  return {
    services: `${tag}:services`,
    routes: `${tag}:routes`,
    changes: `${tag}:changes`,
    heartbeat: `${tag}:heartbeat`,
    lease: `${tag}:lease`,
  };
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

/**
 * The ACL rule for one cluster's sync user: it may touch only keys under its own hash tag.
 * Commands are the ones the writer uses; nothing else (no KEYS, FLUSHALL, CONFIG ...).
 * No `client|setinfo`: Redis < 7.2 rejects the whole ACL SETUSER over that unknown subcommand, and ioredis
 * ignores the refusal of its optional CLIENT SETINFO handshake anyway.
 */
export function syncAclRules(prefix: string, cluster: string): string[] {
  return [
    "on",
    "resetkeys",
    `~${escapeGlob(`${prefix}:{${cluster}}:`)}*`,
    "resetchannels",
    "-@all",
    "+ping",
    "+hello",
    "+client|setname",
    "+info",
    "+select",
    // Topology reads an ioredis Cluster client needs to start; harmless on a standalone Redis.
    "+cluster|slots",
    "+cluster|info",
    "+multi",
    "+exec",
    "+discard",
    "+hset",
    "+hdel",
    "+hgetall",
    "+hget",
    "+hkeys",
    "+xadd",
    "+set",
    "+get",
    "+del",
    "+pexpire",
    "+exists",
  ];
}

/** Read-only ACL rule for routers: read every edgeslice key, write none. */
export function routerAclRules(prefix: string): string[] {
  return [
    "on",
    "resetkeys",
    `%R~${escapeGlob(prefix)}:*`,
    "resetchannels",
    "-@all",
    "+ping",
    "+hello",
    "+client|setname",
    "+info",
    "+select",
    "+cluster|slots",
    "+cluster|info",
    "+cluster|keyslot",
    "+scan",
    "+hgetall",
    "+hget",
    "+hmget",
    "+get",
    "+mget",
    "+exists",
    "+pttl",
    "+xread",
    "+xrange",
    "+xrevrange",
    "+xinfo|stream",
  ];
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
