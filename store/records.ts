import * as v from "valibot";
import { canonicalIp, embeddedIpv4, type IpFamily, ipBytes, ipScope } from "../lib/ip.js";
import type { Result } from "../lib/result.js";
import { ClusterNameSchema, ServiceIdSchema } from "./names.js";
import { GeoPointSchema, RegionSchema } from "./places.js";

/**
 * Schema version 1: the records syncs write until they switch to version 2 (services.ts, routes.ts). Routers
 * read both (stored-records.ts) and refuse anything newer than they understand.
 */
export const SCHEMA_VERSION = 1;

export const PortNumberSchema = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535));

/**
 * Endpoints a family's `endpoints` (and, apart, its `draining`) may list: well above a real Service and about
 * what a 1 MiB record holds. A record over it is refused whole (counted before any endpoint is checked), so a
 * router never builds tiers of hundreds of thousands of backends.
 */
export const MAX_ENDPOINTS_PER_FAMILY = 10_000;

/** Host names one record may list: every one is a route-index entry on every router. */
export const MAX_HOSTS = 1_000;

/** A serialised record longer than this (characters) is refused unparsed; 10,000 endpoints per list fit. */
export const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/**
 * Why `ip` may not be a backend of `family`, or undefined when it may: only the canonical literal
 * (`canonicalIp`: dotted quad, IPv6 as RFC 5952 prints it, no zone id), so no name, integer, hex, short form,
 * userinfo or path reaches a URL parser or DNS, and none of the addresses Kubernetes refuses for an endpoint
 * (ValidateEndpointIP: unspecified, link-local, multicast; broadcast too), also where an IPv6 address embeds
 * such an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64 `64:ff9b::/96`, 6to4: lib/ip.ts embeddedIpv4).
 * Loopback stays allowed (the local all-in-one and the tests run backends on 127.0.0.1 and ::1), but not as the
 * IPv4 address a NAT64, 6to4 or IPv4-compatible address embeds: that is a translator's loopback.
 */
export function endpointIpProblem(ip: string, family: IpFamily): string | undefined {
  const bytes = ipBytes(ip);
  if (bytes === undefined || ip.length > 45) return "is not an IP address literal";
  if ((bytes.length === 4 ? "ipv4" : "ipv6") !== family) return `is not an ${family} address`;
  // A dotted quad that parses is canonical already (ipBytes refuses leading zeros and short forms).
  if (family === "ipv6" && canonicalIp(ip)?.ip !== ip) return "is not in canonical form";
  const scope = ipScope(bytes);
  const embedded = embeddedIpv4(bytes);
  // Judged by the IPv4 address it embeds; a translator's or relay's loopback is no loopback of ours.
  if (scope !== undefined && embedded && embedded.form !== "mapped") {
    return `is ${scope} (it embeds ${embedded.ipv4.join(".")}, ${embedded.form})`;
  }
  if (scope !== undefined && scope !== "loopback") return `is ${scope}`;
  return undefined;
}

function endpointSchemaOf(family: IpFamily) {
  return v.object({
    ip: v.pipe(
      v.string(),
      v.check(
        (ip) => endpointIpProblem(ip, family) === undefined,
        (issue) => `"${String(issue.input).slice(0, 64)}" ${endpointIpProblem(String(issue.input), family)}`,
      ),
    ),
    port: PortNumberSchema,
    /** `endpoints[].zone` of the slice. */
    zone: v.optional(v.pipe(v.string(), v.maxLength(253))),
    /** `hints.forZones[].name`: zones this endpoint should serve (topology-aware routing; at most 8 there). */
    forZones: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(253))), v.maxLength(64))),
    /** `multicluster.kubernetes.io/source-cluster` label of the slice (MCS), when present. */
    sourceCluster: v.optional(v.pipe(v.string(), v.maxLength(253))),
  });
}

/** One backend. `ip` is canonical (IPv6 in RFC 5952 form, no brackets); see endpointIpProblem. */
export const EndpointRecordSchema = v.union([endpointSchemaOf("ipv4"), endpointSchemaOf("ipv6")]);
export type EndpointRecord = v.InferOutput<ReturnType<typeof endpointSchemaOf>>;

/** The backends of one family, as every schema version stores them. */
export function familySchemaOf(family: IpFamily) {
  const endpoints = v.pipe(
    v.array(v.unknown()),
    v.maxLength(MAX_ENDPOINTS_PER_FAMILY),
    v.array(endpointSchemaOf(family)),
  );
  return v.object({
    /** Ready endpoints; or, when none is ready, the serving-terminating ones (then `fallback` is true). */
    endpoints,
    fallback: v.boolean(),
    /** Serving and terminating: for sticky sessions only, never for new traffic. */
    draining: endpoints,
  });
}

/** Backends of one address family. docs/design.md, translation rule 6. */
export type FamilyRecord = v.InferOutput<ReturnType<typeof familySchemaOf>>;

export const ServicePortSchema = v.object({
  /** Service port name, "" when unnamed. */
  name: v.string(),
  /** The Service's own port number (backends carry the target port from the slice). */
  number: PortNumberSchema,
});
export type ServicePort = v.InferOutput<typeof ServicePortSchema>;

/**
 * A lower-case DNS host name (RFC 1123 labels), optionally `*.` and a name: what the sync writes (exposure.ts
 * parseHosts). Anything else could only be matched by a Host header no router accepts.
 */
const HostSchema = v.pipe(
  v.string(),
  v.maxLength(253),
  v.regex(/^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, "host name"),
);
const PathPrefixSchema = v.pipe(v.string(), v.startsWith("/"), v.maxLength(1024));

/** Where a Service is exposed: from its `edgeslice.io/*` annotations. */
export const RouteRecordSchema = v.object({
  v: v.literal(SCHEMA_VERSION),
  service: ServiceIdSchema,
  /** Lower-case host names, without port. */
  hosts: v.pipe(v.array(v.unknown()), v.minLength(1), v.maxLength(MAX_HOSTS), v.array(HostSchema)),
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
  hosts: v.pipe(v.array(v.unknown()), v.minLength(1), v.maxLength(MAX_HOSTS), v.array(HostSchema)),
  pathPrefix: PathPrefixSchema,
  port: ServicePortSchema,
  ipv4: familySchemaOf("ipv4"),
  ipv6: familySchemaOf("ipv6"),
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
  /**
   * Set while the sync cannot reach its Kubernetes API server (writer's clock, ms since epoch): it keeps
   * publishing its last known state (fail static, as kube-proxy keeps its rules). Absent when reachable.
   */
  apiserverUnreachableSince: v.optional(v.number()),
  /**
   * How many Service records the sync holds in the store for this cluster as of this beat: a router that reads
   * fewer says the store lacks some (healthz "degraded"). Absent from syncs that predate it.
   */
  services: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /**
   * Where the cluster runs (the sync's CLUSTER_REGION and CLUSTER_LOCATION), for proximity steering; absent when
   * unset. Optional fields of the same version: a router that predates them drops them (valibot objects ignore
   * keys they do not list), and a router reads a record of a sync that predates them as placed nowhere.
   */
  region: v.optional(RegionSchema),
  location: v.optional(GeoPointSchema),
});
export type HeartbeatRecord = v.InferOutput<typeof HeartbeatRecordSchema>;

export const ChangeOpSchema = v.picklist(["put", "delete"]);
export type ChangeOp = v.InferOutput<typeof ChangeOpSchema>;

/** A change stream entry of schema version 1 (changes.ts reads both versions). */
export const ChangeEntrySchema = v.object({ service: ServiceIdSchema, op: ChangeOpSchema });
export type ChangeEntry = v.InferOutput<typeof ChangeEntrySchema>;

function decodeJson<T>(schema: v.GenericSchema<unknown, T>, raw: string): Result<T> {
  const parsed = parseRecordJson(raw);
  return parsed.ok ? validated(schema, parsed.value) : parsed;
}

/** A stored value's JSON, refused unparsed past MAX_RECORD_BYTES. */
export function parseRecordJson(raw: string): Result<unknown> {
  if (raw.length > MAX_RECORD_BYTES)
    return { ok: false, error: `longer than ${MAX_RECORD_BYTES} characters` };
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch (error) {
    return { ok: false, error: `not JSON: ${(error as Error).message}` };
  }
}

/** `parsed` checked against `schema`; a refusal names the first problem and where it is. */
export function validated<T>(schema: v.GenericSchema<unknown, T>, parsed: unknown): Result<T> {
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
 * these strings to skip unchanged writes (docs/design.md, translation rule 9).
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
