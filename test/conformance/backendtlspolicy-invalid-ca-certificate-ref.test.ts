import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caPolicy, configMapObject, serviceAt, untilAncestors } from "./support/backend-tls-objects.js";
import { httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";
import { expectReadableBySuiteClient } from "./support/routing-cases.js";

/**
 * Conformance BackendTLSPolicyInvalidCACertificateRef: a policy whose one caCertificateRef names a ConfigMap
 * that does not exist, and one whose ConfigMap has no `ca.crt`, are Accepted=False/NoValidCACertificate and
 * ResolvedRefs=False/InvalidCACertificateRef toward the route's Gateway, and their Services' requests are
 * answered 5xx. Their Services point at a plain-HTTP echo backend: a request sent in cleartext would be
 * answered 200 by it.
 */
let world: Conformance;
const POLICIES = ["nonexistent-ca-certificate-ref", "malformed-ca-certificate-ref"] as const;
const service = (policy: string) => `backendtlspolicy-${policy}-test`;

beforeAll(async () => {
  world = await startConformance({
    label: "btls-invalid-ca",
    objects: [
      httpRouteObject("backendtlspolicy-invalid-ca-certificate-ref", {
        parentRefs: [{ name: "same-namespace", namespace: INFRA }],
        hostnames: ["abc.example.com"],
        rules: POLICIES.map((policy) => ({
          backendRefs: [{ name: service(policy), port: 443 }],
          matches: [{ path: { type: "Exact", value: `/backendtlspolicy-${policy}` } }],
        })),
      }),
      caPolicy("nonexistent-ca-certificate-ref", service("nonexistent-ca-certificate-ref"), {
        ca: "nonexistent-ca-certificate",
      }),
      caPolicy("malformed-ca-certificate-ref", service("malformed-ca-certificate-ref"), {
        ca: "malformed-ca-certificate",
      }),
      configMapObject("malformed-ca-certificate", {}),
    ],
    objectsAt: (backends) => {
      const echo = backends.get(`${INFRA}/infra-backend-v1`);
      if (!echo) throw new Error("no echo backend");
      return POLICIES.flatMap((policy) =>
        serviceAt(service(policy), echo, [{ name: "https", port: 443, appProtocol: "HTTPS" }]),
      );
    },
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance BackendTLSPolicyInvalidCACertificateRef", () => {
  it("accepts the route", async () => {
    const parents = await untilParents(
      world.cluster.kube,
      INFRA,
      "backendtlspolicy-invalid-ca-certificate-ref",
      (found) => acceptedAndResolved(found, 1),
    );
    expect(parents.map((item) => item.conditions.find((c) => c.startsWith("Accepted")))).toEqual([
      "Accepted=True/Accepted",
    ]);
  });

  it.each(POLICIES)(
    "refuses %s: NoValidCACertificate and InvalidCACertificateRef toward same-namespace",
    async (policy) => {
      const wanted =
        "same-namespace: Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidCACertificateRef";
      expect(await untilAncestors(world.cluster.kube, policy, (lines) => lines.includes(wanted))).toEqual([
        wanted,
      ]);
    },
  );

  it.each(POLICIES)("answers a request to %s's Service 5xx, never in cleartext", async (policy) => {
    const request = { host: "abc.example.com", path: `/backendtlspolicy-${policy}` };
    const answer = await world.until(request, (found) => found.status >= 500);
    expectReadableBySuiteClient(answer);
    expect([500, 502, 503]).toContain(answer.status);
    expect(answer.echo).toBeUndefined();
  });
});
