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
import type { BackendRef, RouteRecord, RouteRule } from "../../../store/routes.js";
import { type ServiceRecordV2, serializeServiceRecordV2 } from "../../../store/services.js";
import type { Snapshot } from "../../../store/store.js";

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

/** A version 2 service record: each port with its IPv4 and IPv6 endpoints. */
export function serviceRecordV2(options: {
  cluster: string;
  service: string;
  ports: {
    name?: string;
    number: number;
    ipv4?: EndpointRecord[];
    ipv6?: EndpointRecord[];
    /** A BackendTLSPolicy in force on the port: protocol `https`. */
    tlsPolicy?: string;
  }[];
}): ServiceRecordV2 {
  return {
    v: 2,
    cluster: options.cluster,
    service: options.service,
    ports: options.ports.map((port) => ({
      name: port.name ?? "",
      number: port.number,
      ...(port.tlsPolicy ? { protocol: "https" as const, tls: { policy: port.tlsPolicy } } : {}),
      ipv4: { endpoints: port.ipv4 ?? [], fallback: false, draining: [] },
      ipv6: { endpoints: port.ipv6 ?? [], fallback: false, draining: [] },
    })),
  };
}

/** A version 2 route record (an HTTPRoute unless the id says otherwise) with these rules. */
export function routeRecord(
  id: string,
  options: {
    hostnames: string[];
    rules: RouteRule[];
    createdAt?: number;
    wildcard?: RouteRecord["wildcard"];
  },
): RouteRecord {
  return {
    v: 2,
    id,
    source: (id.split(":")[0] ?? "httproute") as RouteRecord["source"],
    createdAt: options.createdAt ?? 1_000,
    hostnames: options.hostnames,
    wildcard: options.wildcard ?? "suffix",
    rules: options.rules,
  };
}

/** A rule: PathPrefix `/` unless matches are given, no filters unless given. */
export function routeRule(
  backends: BackendRef[],
  extra: Partial<Omit<RouteRule, "backends">> = {},
): RouteRule {
  return {
    matches: extra.matches ?? [{ path: { type: "PathPrefix", value: "/" }, headers: [] }],
    filters: extra.filters ?? {},
    backends,
    ...(extra.timeouts !== undefined ? { timeouts: extra.timeouts } : {}),
    ...(extra.retry !== undefined ? { retry: extra.retry } : {}),
  };
}

/** One atomic write of a version 2 service record and its `service` change entry (schema version 2). */
export async function putServiceV2(redis: Redis, prefix: string, record: ServiceRecordV2): Promise<void> {
  await writeV2(redis, prefix, record.cluster, "service", record.service, serializeServiceRecordV2(record));
}

/** One atomic write of a route record (or any string, to test invalid ones) and its `route` change entry. */
export async function putRoute(
  redis: Redis,
  prefix: string,
  cluster: string,
  route: RouteRecord | { id: string; raw: string },
): Promise<void> {
  const raw = "raw" in route ? route.raw : JSON.stringify(route);
  await writeV2(redis, prefix, cluster, "route", route.id, raw);
}

export async function removeRoute(redis: Redis, prefix: string, cluster: string, id: string): Promise<void> {
  await writeV2(redis, prefix, cluster, "route", id, undefined);
}

/** One version 2 write as the sync's script makes it: the record (undefined: its removal) and its change entry. */
async function writeV2(
  redis: Redis,
  prefix: string,
  cluster: string,
  kind: "service" | "route",
  id: string,
  raw: string | undefined,
): Promise<void> {
  const keys = clusterKeys(prefix, cluster);
  const hash = kind === "service" ? keys.services : keys.routes;
  const transaction = redis.multi();
  if (raw === undefined) transaction.hdel(hash, id);
  else transaction.hset(hash, id, raw);
  const op = raw === undefined ? "delete" : "put";
  await transaction
    .xadd(keys.changes, "MAXLEN", "~", CHANGE_STREAM_MAXLEN, "*", "v", "2", "kind", kind, "id", id, "op", op)
    .exec();
}

/**
 * Whether a router's snapshot lists `backend` as an active endpoint of any port of `service` (`ns/name`) in
 * `cluster`, whichever schema version the sync wrote it in.
 */
export function snapshotLists(
  snapshot: Snapshot | undefined,
  cluster: string,
  service: string,
  backend: { readonly ip: string; readonly port: number },
): boolean {
  const record = snapshot?.clusters.find((view) => view.name === cluster)?.servicesV2.get(service);
  return (record?.ports ?? []).some((port) =>
    [...port.ipv4.endpoints, ...port.ipv6.endpoints].some(
      (e) => e.ip === backend.ip && e.port === backend.port,
    ),
  );
}
