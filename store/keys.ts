import { byCodeUnits } from "../lib/code-unit-order.js";
import type { RouteRecord } from "./routes.js";

/**
 * Redis key layout. Every key of one cluster shares the hash tag `{cluster}`, so each atomic write (one
 * script over the fence, a record, the host index and the change stream) stays in one slot on Redis Cluster,
 * and one ACL key pattern `~<prefix>:{<cluster>}:*` confines a cluster's sync to its keys. One key lies outside
 * every cluster's tag: the registry of clusters (clustersKey), which each sync may only add its name to.
 */
export interface ClusterKeys {
  /**
   * HASH: `ns/name` → service record JSON: version 2 (services.ts, the referenced ports with their
   * backends), or version 1 (records.ts) from a sync not upgraded yet.
   */
  readonly services: string;
  /**
   * HASH: route id → route record JSON, version 2 (routes.ts). A version 1 sync kept `ns/name` → its route
   * here instead; route ids always hold a ":", service ids never, so the two cannot be confused.
   */
  readonly routes: string;
  /**
   * ZSET, every score 0: the host index of the cluster's version 2 route records, one member per host
   * pattern of each route (hostIndexMembers), kept by the same atomic write as the route. A reader finds the
   * routes and services one host needs with ZRANGEBYLEX over `[<host>\x1f` .. `(<host>\x20` (hostIndexRange).
   */
  readonly hosts: string;
  /**
   * STREAM, capped: one entry per change. Version 2: fields `kind` (service | route), `id`, `op`, `v` (2);
   * version 1 (a sync not upgraded yet): `service` and `op` (store/changes.ts reads both).
   */
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
  /** HASH: Secret `ns/name` → certificate record JSON (certificates.ts; the private key sealed). */
  readonly certificates: string;
  /**
   * STRING, a counter: bumped by every certificate write in the same script, so a router polls one small key
   * per cluster and re-reads the hash only when it moved. Kept off the change stream, which routers and
   * Workers read for services and routes only.
   */
  readonly certificatesVersion: string;
  /**
   * HASH: `namespace/gateway:port` → client validation record JSON (client-validations.ts), written by the
   * certificate script, so certificatesVersion moves with it.
   */
  readonly clientValidations: string;
  /**
   * HASH: `policy:ns/name` and `client:ns/name` → backend TLS record JSON (backend-tls.ts: a BackendTLSPolicy's
   * validation, a Gateway's backend client certificate with its key sealed), apart from the listener
   * certificates so that none is ever served to a client.
   */
  readonly backendTls: string;
  /** STRING, a counter: bumped by every backend TLS write in the same script, polled as certificatesVersion. */
  readonly backendTlsVersion: string;
}

export function clusterKeys(prefix: string, cluster: string): ClusterKeys {
  const tag = clusterTag(prefix, cluster);
  return {
    services: `${tag}:services`,
    routes: `${tag}:routes`,
    hosts: `${tag}:hosts`,
    changes: `${tag}:changes`,
    heartbeat: `${tag}:heartbeat`,
    lease: `${tag}:lease`,
    writer: `${tag}:writer`,
    claim: `${tag}:claim`,
    certificates: `${tag}:certificates`,
    certificatesVersion: `${tag}:certificates-version`,
    clientValidations: `${tag}:client-validations`,
    backendTls: `${tag}:backend-tls`,
    backendTlsVersion: `${tag}:backend-tls-version`,
  };
}

/**
 * SET of cluster names, outside every cluster's hash tag: each sync adds its own name (SADD) with its
 * heartbeats and route writes, so a reader finds every cluster in one round trip instead of a SCAN. Sync users
 * may add to it and do nothing else with it (acl.ts); a name stays after its cluster is gone, so a reader
 * still takes a cluster's presence from its heartbeat key.
 */
export function clustersKey(prefix: string): string {
  return `${prefix}:clusters`;
}

/** Separates the fields of a host index member: a control character no host, route id or service id holds. */
export const HOST_INDEX_SEPARATOR = "\x1f";
/** The host pattern of a route without hostnames (it serves every host) in the host index. */
export const ANY_HOST = "*";

/**
 * The host index members of one route record: `<host pattern>\x1f<route id>\x1f<service ids>` for each of
 * its hostnames (ANY_HOST when it has none), where the service ids are those its valid backends name, sorted
 * and comma-separated (empty when none). A lookup for host `a.b.example` reads the members of `a.b.example`,
 * of each wildcard that may cover it (`*.b.example`, `*.example`) and of ANY_HOST, then checks each route's
 * own `wildcard` rule. The writer's script derives the same members from the stored JSON (redis/writer.ts).
 */
export function hostIndexMembers(route: Pick<RouteRecord, "id" | "hostnames" | "rules">): string[] {
  const services = new Set<string>();
  for (const rule of route.rules) {
    for (const backend of rule.backends) if ("service" in backend) services.add(backend.service);
  }
  const tail = `${HOST_INDEX_SEPARATOR}${route.id}${HOST_INDEX_SEPARATOR}${[...services].sort(byCodeUnits).join(",")}`;
  const hosts = route.hostnames.length === 0 ? [ANY_HOST] : route.hostnames;
  return [...new Set(hosts)].map((host) => `${host}${tail}`);
}

/** The ZRANGEBYLEX bounds that select every member of one host pattern (inclusive start, exclusive end). */
export function hostIndexRange(hostPattern: string): readonly [string, string] {
  return [`[${hostPattern}${HOST_INDEX_SEPARATOR}`, `(${hostPattern}\x20`];
}

/** A member's fields, or undefined for a string of another shape. */
export function parseHostIndexMember(
  member: string,
): { readonly host: string; readonly route: string; readonly services: readonly string[] } | undefined {
  const [host, route, services, extra] = member.split(HOST_INDEX_SEPARATOR);
  if (host === undefined || route === undefined || services === undefined || extra !== undefined) {
    return undefined;
  }
  return { host, route, services: services === "" ? [] : services.split(",") };
}

/** Glob matching every key of one cluster: its sync user's ACL key pattern. */
export function clusterKeysPattern(prefix: string, cluster: string): string {
  return `${escapeGlob(`${clusterTag(prefix, cluster)}:`)}*`;
}

/** Glob matching exactly the registry of clusters: the key sync users may SADD to (acl.ts). */
export function clustersKeyPattern(prefix: string): string {
  return escapeGlob(clustersKey(prefix));
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
