import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caPolicy, untilAncestors } from "./support/backend-tls-objects.js";
import { httpRouteObject } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { startTlsChecksBackend, type TlsChecksBackend, tlsEcho } from "./support/tls-checks-backend.js";

/**
 * Conformance BackendTLSPolicyConflictResolution (GEP-713 conflicts): two policies on a whole Service, and two
 * on one named port of another, each pair with hostnames other.example.com (the older) and abc.example.com:
 * the older is Accepted, the other Accepted=False/Conflicted, and requests go over TLS with the accepted one's
 * hostname as SNI. A policy on port https-1 and one on the whole Service are both Accepted: port 443 (https-1)
 * gets the port's policy (SNI other.example.com), port 8443 the Service's (SNI abc.example.com).
 */
const WITHOUT = "backendtlspolicy-conflicted-without-section-name-test";
const WITH = "backendtlspolicy-conflicted-with-section-name-test";
const NOT_CONFLICTED = "backendtlspolicy-not-conflicted-test";
const TWO_PORTS = [
  { name: "https-1", port: 443 },
  { name: "https-2", port: 8443 },
];

let world: Conformance;
let tls: TlsChecksBackend;

/** `policy` created `at`: the conflict rule keeps the oldest. */
const createdAt = (object: ReturnType<typeof caPolicy>, at: string) => ({
  ...object,
  metadata: { ...object.metadata, creationTimestamp: at },
});

beforeAll(async () => {
  tls = await startTlsChecksBackend();
  const rule = (service: string, port: number, path: string) => ({
    backendRefs: [{ name: service, port }],
    matches: [{ path: { type: "Exact", value: `/backendtlspolicy-${path}` } }],
  });
  world = await startConformance({
    label: "btls-conflicts",
    objects: [
      httpRouteObject("backendtlspolicy-conflict-resolution", {
        parentRefs: [{ name: "same-namespace" }],
        hostnames: ["abc.example.com"],
        rules: [
          rule(WITHOUT, 443, "conflicted-without-section-name"),
          rule(WITH, 443, "conflicted-with-section-name"),
          rule(NOT_CONFLICTED, 443, "not-conflicted-with-section-name"),
          rule(NOT_CONFLICTED, 8443, "not-conflicted-without-section-name"),
        ],
      }),
      ...tls.configMaps,
      ...tls.serviceObjects(WITHOUT, [{ name: "https", port: 443 }]),
      ...tls.serviceObjects(WITH, TWO_PORTS),
      ...tls.serviceObjects(NOT_CONFLICTED, TWO_PORTS),
      createdAt(
        caPolicy("conflicted-without-section-name-1", WITHOUT, { hostname: "other.example.com" }),
        "2026-01-01T00:00:00Z",
      ),
      createdAt(caPolicy("conflicted-without-section-name-2", WITHOUT), "2026-01-01T00:00:01Z"),
      createdAt(
        caPolicy("conflicted-with-section-name-1", WITH, {
          hostname: "other.example.com",
          sectionName: "https-1",
        }),
        "2026-01-01T00:00:00Z",
      ),
      createdAt(
        caPolicy("conflicted-with-section-name-2", WITH, { sectionName: "https-1" }),
        "2026-01-01T00:00:01Z",
      ),
      caPolicy("not-conflicted-with-section-name", NOT_CONFLICTED, {
        hostname: "other.example.com",
        sectionName: "https-1",
      }),
      caPolicy("not-conflicted-without-section-name", NOT_CONFLICTED),
    ],
  });
}, 30_000);

afterAll(async () => {
  await world?.stop();
  await tls?.close();
});

const ACCEPTED = /^same-namespace: Accepted=True\/Accepted /;
const CONFLICTED = /^same-namespace: Accepted=False\/Conflicted/;

async function expectAncestor(policy: string, wanted: RegExp): Promise<void> {
  const lines = await untilAncestors(world.cluster.kube, policy, (found) =>
    found.some((line) => wanted.test(line)),
  );
  expect(lines).toEqual([expect.stringMatching(wanted)]);
}

/** The request of `path` answered by the TLS backend, which saw server name `sni`. */
async function expectServedWith(path: string, sni: string): Promise<void> {
  const request = { host: "abc.example.com", path: `/backendtlspolicy-${path}` };
  const answer = await world.until(request, (found) => found.status === 200);
  expect(answer.status).toBe(200);
  expect(tlsEcho(answer)).toMatchObject({ path: request.path, sni });
}

describe("conformance BackendTLSPolicyConflictResolution", () => {
  describe("two policies on the same Service without a section name", () => {
    it("accepts the first", () => expectAncestor("conflicted-without-section-name-1", ACCEPTED));
    it("marks the second Accepted=False/Conflicted", () =>
      expectAncestor("conflicted-without-section-name-2", CONFLICTED));
    it("sends over TLS with the accepted policy's hostname as SNI", () =>
      expectServedWith("conflicted-without-section-name", "other.example.com"));
  });

  describe("two policies on the same Service port (section name)", () => {
    it("accepts the first", () => expectAncestor("conflicted-with-section-name-1", ACCEPTED));
    it("marks the second Accepted=False/Conflicted", () =>
      expectAncestor("conflicted-with-section-name-2", CONFLICTED));
    it("sends over TLS with the accepted policy's hostname as SNI", () =>
      expectServedWith("conflicted-with-section-name", "other.example.com"));
  });

  describe("a policy on a port and one on the whole Service", () => {
    it("accepts the port's policy", () => expectAncestor("not-conflicted-with-section-name", ACCEPTED));
    it("accepts the Service's policy", () => expectAncestor("not-conflicted-without-section-name", ACCEPTED));
    it("sends to the named port with the port's policy", () =>
      expectServedWith("not-conflicted-with-section-name", "other.example.com"));
    it("sends to the other port with the Service's policy", () =>
      expectServedWith("not-conflicted-without-section-name", "abc.example.com"));
  });
});
