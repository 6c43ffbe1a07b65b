import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendTlsPolicyObject, serviceAt, untilAncestors } from "./support/backend-tls-objects.js";
import { httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { expectReadableBySuiteClient } from "./support/routing-cases.js";

/**
 * Conformance BackendTLSPolicyInvalidKind: a policy whose one caCertificateRef is of a kind other than
 * ConfigMap is Accepted=False/NoValidCACertificate and ResolvedRefs=False/InvalidKind toward the route's
 * Gateway, and its Service's requests are answered 5xx (its endpoint is a plain-HTTP echo backend, which
 * would answer a cleartext request 200).
 */
let world: Conformance;
const SERVICE = "backendtlspolicy-invalid-kind-test";

beforeAll(async () => {
  world = await startConformance({
    label: "btls-invalid-kind",
    objects: [
      httpRouteObject("backendtlspolicy-invalid-kind-test", {
        parentRefs: [{ name: "same-namespace", namespace: INFRA }],
        hostnames: ["abc.example.com"],
        rules: [
          {
            backendRefs: [{ name: SERVICE, port: 443 }],
            matches: [{ path: { type: "Exact", value: "/backendtlspolicy-invalid-kind" } }],
          },
        ],
      }),
      backendTlsPolicyObject("invalid-kind", {
        targetRefs: [{ group: "", kind: "Service", name: SERVICE }],
        validation: {
          caCertificateRefs: [{ group: "invalid.io", kind: "InvalidKind", name: "invalid-kind" }],
          hostname: "abc.example.com",
        },
      }),
    ],
    objectsAt: (backends) => {
      const echo = backends.get(`${INFRA}/infra-backend-v1`);
      if (!echo) throw new Error("no echo backend");
      return serviceAt(SERVICE, echo, [{ name: "https", port: 443, appProtocol: "HTTPS" }]);
    },
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance BackendTLSPolicyInvalidKind", () => {
  it("is NoValidCACertificate and InvalidKind toward same-namespace", async () => {
    const wanted = "same-namespace: Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidKind";
    expect(
      await untilAncestors(world.cluster.kube, "invalid-kind", (lines) => lines.includes(wanted)),
    ).toEqual([wanted]);
  });

  it("answers a request to the Service 5xx, never in cleartext", async () => {
    const request = { host: "abc.example.com", path: "/backendtlspolicy-invalid-kind" };
    const answer = await world.until(request, (found) => found.status >= 500);
    expectReadableBySuiteClient(answer);
    expect([500, 502, 503]).toContain(answer.status);
    expect(answer.echo).toBeUndefined();
  });
});
