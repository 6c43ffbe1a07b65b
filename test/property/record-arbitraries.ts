import fc from "fast-check";
import {
  type EndpointRecord,
  type FamilyRecord,
  type HeartbeatRecord,
  type RouteRecord,
  SCHEMA_VERSION,
  type ServiceRecord,
} from "../../store/records.js";

/** Generators of valid store records, for property tests of decoding. */
const dnsLabel = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
const serviceIdArb = fc.tuple(dnsLabel, dnsLabel).map(([ns, name]) => `${ns}/${name}`);
const portArb = fc.integer({ min: 1, max: 65535 });
const hostArb = fc.domain();
const pathPrefixArb = fc.oneof(
  fc.constant("/"),
  fc.webPath().map((p) => (p.startsWith("/") ? p : `/${p}`)),
);

const endpointArb: fc.Arbitrary<EndpointRecord> = fc.record(
  {
    ip: fc.oneof(fc.ipV4(), fc.ipV6()).filter((ip) => ip.length >= 2 && ip.length <= 45),
    port: portArb,
    zone: dnsLabel,
    forZones: fc.array(dnsLabel, { maxLength: 3 }),
    sourceCluster: dnsLabel,
  },
  { requiredKeys: ["ip", "port"] },
);

const familyArb: fc.Arbitrary<FamilyRecord> = fc.record({
  endpoints: fc.array(endpointArb, { maxLength: 5 }),
  fallback: fc.boolean(),
  draining: fc.array(endpointArb, { maxLength: 3 }),
});

export const serviceRecordArb: fc.Arbitrary<ServiceRecord> = fc.record({
  v: fc.constant(SCHEMA_VERSION),
  cluster: dnsLabel,
  service: serviceIdArb,
  hosts: fc.array(hostArb, { minLength: 1, maxLength: 3 }),
  pathPrefix: pathPrefixArb,
  port: fc.record({ name: fc.oneof(fc.constant(""), dnsLabel), number: portArb }),
  ipv4: familyArb,
  ipv6: familyArb,
});

export const routeRecordArb: fc.Arbitrary<RouteRecord> = serviceRecordArb.map((r) => ({
  v: r.v,
  service: r.service,
  hosts: r.hosts,
  pathPrefix: r.pathPrefix,
  port: r.port,
}));

export const heartbeatRecordArb: fc.Arbitrary<HeartbeatRecord> = fc.record({
  v: fc.constant(SCHEMA_VERSION),
  cluster: dnsLabel,
  holder: fc.string(),
  at: fc.integer({ min: 0 }),
  leaseMs: fc.integer({ min: 1, max: 600_000 }),
});
