import * as v from "valibot";
import type { Result } from "../lib/result.js";
import { ClusterNameSchema, ServiceIdSchema } from "./names.js";

/** Bumped on any incompatible change; readers skip (and log) records of another version. */
export const SCHEMA_VERSION = 1;

const PortNumberSchema = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535));

/** One backend. `ip` is canonical (IPv6 in RFC 5952 form, no brackets). */
export const EndpointRecordSchema = v.object({
  ip: v.pipe(v.string(), v.minLength(2), v.maxLength(45)),
  port: PortNumberSchema,
  /** `endpoints[].zone` of the slice. */
  zone: v.optional(v.string()),
  /** `hints.forZones[].name`: zones this endpoint should serve (topology-aware routing). */
  forZones: v.optional(v.array(v.string())),
  /** `multicluster.kubernetes.io/source-cluster` label of the slice (MCS), when present. */
  sourceCluster: v.optional(v.string()),
});
export type EndpointRecord = v.InferOutput<typeof EndpointRecordSchema>;

/** Backends of one address family. DESIGN.md translation rule 6. */
export const FamilyRecordSchema = v.object({
  /** Ready endpoints; or, when none is ready, the serving-terminating ones (then `fallback` is true). */
  endpoints: v.array(EndpointRecordSchema),
  fallback: v.boolean(),
  /** Serving and terminating: for sticky sessions only, never for new traffic. */
  draining: v.array(EndpointRecordSchema),
});
export type FamilyRecord = v.InferOutput<typeof FamilyRecordSchema>;

export const ServicePortSchema = v.object({
  /** Service port name, "" when unnamed. */
  name: v.string(),
  /** The Service's own port number (backends carry the target port from the slice). */
  number: PortNumberSchema,
});
export type ServicePort = v.InferOutput<typeof ServicePortSchema>;

const HostSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(253));
const PathPrefixSchema = v.pipe(v.string(), v.startsWith("/"), v.maxLength(1024));

/** Where a Service is exposed: from its `edgeslice.io/*` annotations. */
export const RouteRecordSchema = v.object({
  v: v.literal(SCHEMA_VERSION),
  service: ServiceIdSchema,
  /** Lower-case host names, without port. */
  hosts: v.pipe(v.array(HostSchema), v.minLength(1)),
  /** "/" when not annotated. */
  pathPrefix: PathPrefixSchema,
  port: ServicePortSchema,
});
export type RouteRecord = v.InferOutput<typeof RouteRecordSchema>;

/** Value of one (cluster, service): everything a router needs to send traffic to it. */
export const ServiceRecordSchema = v.object({
  v: v.literal(SCHEMA_VERSION),
  cluster: ClusterNameSchema,
  service: ServiceIdSchema,
  hosts: v.pipe(v.array(HostSchema), v.minLength(1)),
  pathPrefix: PathPrefixSchema,
  port: ServicePortSchema,
  ipv4: FamilyRecordSchema,
  ipv6: FamilyRecordSchema,
});
export type ServiceRecord = v.InferOutput<typeof ServiceRecordSchema>;

export const HeartbeatRecordSchema = v.object({
  v: v.literal(SCHEMA_VERSION),
  cluster: ClusterNameSchema,
  /** Identity of the writing replica (pod name). */
  holder: v.string(),
  /** Writer's clock, ms since epoch: informational only; staleness comes from the lease key's TTL. */
  at: v.number(),
  leaseMs: v.pipe(v.number(), v.integer(), v.minValue(1)),
});
export type HeartbeatRecord = v.InferOutput<typeof HeartbeatRecordSchema>;

export const ChangeOpSchema = v.picklist(["put", "delete"]);
export type ChangeOp = v.InferOutput<typeof ChangeOpSchema>;

export const ChangeEntrySchema = v.object({ service: ServiceIdSchema, op: ChangeOpSchema });
export type ChangeEntry = v.InferOutput<typeof ChangeEntrySchema>;

function decodeJson<T>(schema: v.GenericSchema<unknown, T>, raw: string): Result<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    return { ok: false, error: `not JSON: ${(error as Error).message}` };
  }
  const result = v.safeParse(schema, parsed);
  if (result.success) return { ok: true, value: result.output };
  const issue = result.issues[0];
  const path = issue ? v.getDotPath(issue) : null;
  return { ok: false, error: `${path ?? "(root)"}: ${issue?.message ?? "invalid"}` };
}

export function decodeServiceRecord(raw: string): Result<ServiceRecord> {
  return decodeJson(ServiceRecordSchema, raw);
}
export function decodeRouteRecord(raw: string): Result<RouteRecord> {
  return decodeJson(RouteRecordSchema, raw);
}
export function decodeHeartbeatRecord(raw: string): Result<HeartbeatRecord> {
  return decodeJson(HeartbeatRecordSchema, raw);
}

/**
 * Serialises with a fixed key order so that equal records give equal strings: the writer compares
 * these strings to skip unchanged writes (DESIGN.md rule 9).
 */
export function serializeServiceRecord(record: ServiceRecord): string {
  return JSON.stringify({
    v: record.v,
    cluster: record.cluster,
    service: record.service,
    hosts: record.hosts,
    pathPrefix: record.pathPrefix,
    port: { name: record.port.name, number: record.port.number },
    ipv4: serializableFamily(record.ipv4),
    ipv6: serializableFamily(record.ipv6),
  });
}

export function routeOf(record: ServiceRecord): RouteRecord {
  return {
    v: SCHEMA_VERSION,
    service: record.service,
    hosts: record.hosts,
    pathPrefix: record.pathPrefix,
    port: { name: record.port.name, number: record.port.number },
  };
}

export function serializeRouteRecord(route: RouteRecord): string {
  return JSON.stringify({
    v: route.v,
    service: route.service,
    hosts: route.hosts,
    pathPrefix: route.pathPrefix,
    port: { name: route.port.name, number: route.port.number },
  });
}

function serializableFamily(family: FamilyRecord): FamilyRecord {
  return {
    endpoints: family.endpoints.map(canonicalEndpoint),
    fallback: family.fallback,
    draining: family.draining.map(canonicalEndpoint),
  };
}

/** A record with exactly the contract's fields in their fixed order; optional ones left out when absent. */
export function canonicalEndpoint(endpoint: EndpointRecord): EndpointRecord {
  const out: EndpointRecord = { ip: endpoint.ip, port: endpoint.port };
  if (endpoint.zone !== undefined) out.zone = endpoint.zone;
  if (endpoint.forZones !== undefined) out.forZones = endpoint.forZones;
  if (endpoint.sourceCluster !== undefined) out.sourceCluster = endpoint.sourceCluster;
  return out;
}

/** `ip:port`, or `[ip]:port` for IPv6: the form used in `--print`, logs and upstream URLs. */
export function endpointAddress(endpoint: Pick<EndpointRecord, "ip" | "port">): string {
  return endpoint.ip.includes(":") ? `[${endpoint.ip}]:${endpoint.port}` : `${endpoint.ip}:${endpoint.port}`;
}
