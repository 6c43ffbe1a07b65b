import type { Redis } from "ioredis";
import { CHANGE_STREAM_MAXLEN, clusterKeys } from "../../../store/keys.js";
import {
  type EndpointRecord,
  routeOf,
  SCHEMA_VERSION,
  type ServiceRecord,
  serializeRouteRecord,
  serializeServiceRecord,
} from "../../../store/records.js";

/**
 * Writes the store's Redis layout by hand (store/keys.ts), the way a sync writer does, so the router's
 * reader is tested against the contract rather than against another teammate's writer.
 */

export function serviceRecord(options: {
  cluster: string;
  service: string;
  hosts?: string[];
  ipv4?: EndpointRecord[];
  ipv6?: EndpointRecord[];
  pathPrefix?: string;
}): ServiceRecord {
  return {
    v: SCHEMA_VERSION,
    cluster: options.cluster,
    service: options.service,
    hosts: options.hosts ?? [`${options.service.replace("/", "-")}.example.test`],
    pathPrefix: options.pathPrefix ?? "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints: options.ipv4 ?? [], fallback: false, draining: [] },
    ipv6: { endpoints: options.ipv6 ?? [], fallback: false, draining: [] },
  };
}

/** Registers the cluster (heartbeat) and gives it a lease of `leaseMs` (server-side expiry). */
export async function heartbeat(
  redis: Redis,
  prefix: string,
  cluster: string,
  leaseMs: number,
): Promise<void> {
  const keys = clusterKeys(prefix, cluster);
  const beat = JSON.stringify({ v: SCHEMA_VERSION, cluster, holder: "test", at: Date.now(), leaseMs });
  await redis.multi().set(keys.heartbeat, beat).set(keys.lease, "test", "PX", leaseMs).exec();
}

/** One atomic write: record, route and a `put` change entry. */
export async function putRecord(redis: Redis, prefix: string, record: ServiceRecord): Promise<void> {
  await putRaw(redis, prefix, record.cluster, record.service, serializeServiceRecord(record), {
    route: serializeRouteRecord(routeOf(record)),
  });
}

/** Writes any string as a service's record (to test invalid ones). */
export async function putRaw(
  redis: Redis,
  prefix: string,
  cluster: string,
  service: string,
  raw: string,
  options: { route?: string } = {},
): Promise<void> {
  const keys = clusterKeys(prefix, cluster);
  const tx = redis.multi().hset(keys.services, service, raw);
  if (options.route !== undefined) tx.hset(keys.routes, service, options.route);
  tx.xadd(keys.changes, "MAXLEN", "~", CHANGE_STREAM_MAXLEN, "*", "service", service, "op", "put");
  await tx.exec();
}

export async function removeRecord(
  redis: Redis,
  prefix: string,
  cluster: string,
  service: string,
): Promise<void> {
  const keys = clusterKeys(prefix, cluster);
  await redis
    .multi()
    .hdel(keys.services, service)
    .hdel(keys.routes, service)
    .xadd(keys.changes, "MAXLEN", "~", CHANGE_STREAM_MAXLEN, "*", "service", service, "op", "delete")
    .exec();
}

export function endpoint(ip: string, port: number): EndpointRecord {
  return { ip, port };
}
