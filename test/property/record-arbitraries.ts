import fc from "fast-check";
import { canonicalIp, type IpFamily } from "../../lib/ip.js";
import {
  type EndpointRecord,
  endpointIpProblem,
  type FamilyRecord,
  type HeartbeatRecord,
  type RouteRecord,
  SCHEMA_VERSION,
  type ServiceRecord,
} from "../../store/records.js";
import type { ServiceRecordV2 } from "../../store/services.js";

/** Generators of valid store records, for property tests of decoding. */
const dnsLabel = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
const serviceIdArb = fc.tuple(dnsLabel, dnsLabel).map(([ns, name]) => `${ns}/${name}`);
const portArb = fc.integer({ min: 1, max: 65535 });
const hostArb = fc.domain();
const pathPrefixArb = fc.oneof(
  fc.constant("/"),
  fc.webPath().map((p) => (p.startsWith("/") ? p : `/${p}`)),
);

/** Addresses a record may hold: the canonical literal of the family, and not a special range (store/records.ts). */
const ipArb = (family: IpFamily): fc.Arbitrary<string> =>
  (family === "ipv4" ? fc.ipV4() : fc.ipV6())
    .map((ip) => canonicalIp(ip)?.ip ?? ip)
    .filter((ip) => endpointIpProblem(ip, family) === undefined);

const endpointArb = (family: IpFamily): fc.Arbitrary<EndpointRecord> =>
  fc.record(
    {
      ip: ipArb(family),
      port: portArb,
      zone: dnsLabel,
      forZones: fc.array(dnsLabel, { maxLength: 3 }),
      sourceCluster: dnsLabel,
    },
    { requiredKeys: ["ip", "port"] },
  );

const familyArb = (family: IpFamily): fc.Arbitrary<FamilyRecord> =>
  fc.record({
    endpoints: fc.array(endpointArb(family), { maxLength: 5 }),
    fallback: fc.boolean(),
    draining: fc.array(endpointArb(family), { maxLength: 3 }),
  });

export const serviceRecordArb: fc.Arbitrary<ServiceRecord> = fc.record({
  v: fc.constant(SCHEMA_VERSION),
  cluster: dnsLabel,
  service: serviceIdArb,
  hosts: fc.array(hostArb, { minLength: 1, maxLength: 3 }),
  pathPrefix: pathPrefixArb,
  port: fc.record({ name: fc.oneof(fc.constant(""), dnsLabel), number: portArb }),
  ipv4: familyArb("ipv4"),
  ipv6: familyArb("ipv6"),
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

/** Version 2 service records: a few ports of distinct numbers, each with its backends. */
export const serviceRecordV2Arb: fc.Arbitrary<ServiceRecordV2> = fc.record({
  v: fc.constant(2 as const),
  cluster: dnsLabel,
  service: serviceIdArb,
  ports: fc.uniqueArray(
    fc.record({
      name: fc.oneof(fc.constant(""), dnsLabel),
      number: portArb,
      ipv4: familyArb("ipv4"),
      ipv6: familyArb("ipv6"),
    }),
    { maxLength: 3, selector: (port) => port.number },
  ),
});
