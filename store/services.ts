import * as v from "valibot";
import type { Result } from "../lib/result.js";
import { CertificateIdSchema } from "./certificates.js";
import { ClusterNameSchema, ServiceIdSchema } from "./names.js";
import {
  canonicalEndpoint,
  type FamilyRecord,
  familySchemaOf,
  PortNumberSchema,
  parseRecordJson,
  type ServiceRecord,
  validated,
} from "./records.js";
import { canonicalSteering, ServiceSteeringSchema } from "./steering.js";

/**
 * Service records, schema version 2 (`services` hash, field `ns/name`): the backends of each port of one
 * Service that some route of its cluster references (routes.ts names backends by Service and port). Version 1
 * (records.ts) held one port together with where it was exposed; a router reads both (stored-records.ts).
 */
export const SERVICE_SCHEMA_VERSION = 2;

/**
 * Ports one record may list. Kubernetes sets no limit, but every port repeats the Service's endpoints and
 * MAX_RECORD_BYTES bounds the whole record anyway.
 */
export const MAX_PORTS = 100;

/**
 * The protocol a router speaks to a port's backends, from the Service port's `appProtocol` (sync/translate/
 * app-protocol.ts): `h2c` HTTP/2 over cleartext with prior knowledge (RFC 9113 §3.3), `ws` HTTP/1.1 with
 * WebSocket upgrades, `https` HTTP/1.1 over TLS as the port's BackendTLSPolicy says (`tls`). Absent: HTTP/1.1.
 * A field added to version 2: a router that predates it ignores it (and speaks HTTP/1.1 as before); a value a
 * router does not know fails the record, as speaking the wrong protocol to every backend of the port would
 * fail each request anyway (and cleartext to a TLS port would also leave the verification out).
 */
export const BACKEND_PROTOCOLS = ["h2c", "ws", "https"] as const;
export type BackendProtocol = (typeof BACKEND_PROTOCOLS)[number];

/** One port of a Service with its backends; endpoints carry the target port from the slice. */
export const ServicePortRecordSchema = v.object({
  /** Service port name, "" when unnamed. */
  name: v.pipe(v.string(), v.maxLength(253)),
  /** The Service's own port number: what a backendRef names. */
  number: PortNumberSchema,
  protocol: v.optional(v.picklist(BACKEND_PROTOCOLS)),
  /**
   * With protocol `https`: the BackendTLSPolicy in force on the port (`namespace/name`), whose validation is
   * the cluster's backend TLS record of that id (backend-tls.ts); no such record, no request to the port.
   */
  tls: v.optional(v.strictObject({ policy: CertificateIdSchema })),
  ipv4: familySchemaOf("ipv4"),
  ipv6: familySchemaOf("ipv6"),
});
export type ServicePortRecord = v.InferOutput<typeof ServicePortRecordSchema>;

export const ServiceRecordV2Schema = v.object({
  v: v.literal(SERVICE_SCHEMA_VERSION),
  cluster: ClusterNameSchema,
  service: ServiceIdSchema,
  /** Sorted by number, each number once. */
  ports: v.pipe(
    v.array(v.unknown()),
    v.maxLength(MAX_PORTS),
    v.array(ServicePortRecordSchema),
    v.check(
      (ports) => new Set(ports.map((port) => port.number)).size === ports.length,
      "port numbers repeat",
    ),
  ),
  /**
   * The Service's cluster steering annotations (steering.ts); absent: the router's CLUSTER_STEERING. Routers
   * that predate it ignore the field (valibot objects drop keys they do not list); a value a router cannot read
   * (a policy newer than it knows) is left out with one line, never the whole record (stored-records.ts).
   */
  steering: v.optional(ServiceSteeringSchema),
});
export type ServiceRecordV2 = v.InferOutput<typeof ServiceRecordV2Schema>;

export function decodeServiceRecordV2(raw: string): Result<ServiceRecordV2> {
  const parsed = parseRecordJson(raw);
  return parsed.ok ? validated(ServiceRecordV2Schema, parsed.value) : parsed;
}

/** Fixed key order, ports sorted: equal records give equal strings (the writer skips unchanged writes). */
export function serializeServiceRecordV2(record: ServiceRecordV2): string {
  return JSON.stringify({
    v: record.v,
    cluster: record.cluster,
    service: record.service,
    ports: [...record.ports]
      .sort((a, b) => a.number - b.number)
      .map((port) => ({
        name: port.name,
        number: port.number,
        ...(port.protocol === undefined ? {} : { protocol: port.protocol }),
        ...(port.tls === undefined ? {} : { tls: { policy: port.tls.policy } }),
        ipv4: canonicalFamily(port.ipv4),
        ipv6: canonicalFamily(port.ipv6),
      })),
    ...(record.steering === undefined ? {} : { steering: canonicalSteering(record.steering) }),
  });
}

function canonicalFamily(family: FamilyRecord): FamilyRecord {
  return {
    endpoints: family.endpoints.map(canonicalEndpoint),
    fallback: family.fallback,
    draining: family.draining.map(canonicalEndpoint),
  };
}

/** The port a backendRef names, or undefined when the record has no such port. */
export function servicePort(record: ServiceRecordV2, number: number): ServicePortRecord | undefined {
  for (const port of record.ports) if (port.number === number) return port;
  return undefined;
}

/**
 * A version 1 record as version 2: its one port, sharing the record's family objects. Its route is
 * annotationRoute (legacy.ts).
 */
export function serviceRecordFromV1(record: ServiceRecord): ServiceRecordV2 {
  return {
    v: SERVICE_SCHEMA_VERSION,
    cluster: record.cluster,
    service: record.service,
    ports: [{ name: record.port.name, number: record.port.number, ipv4: record.ipv4, ipv6: record.ipv6 }],
  };
}
