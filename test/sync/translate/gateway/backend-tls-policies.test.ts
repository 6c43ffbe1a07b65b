import { describe, expect, it } from "vitest";
import type { RouteRecord } from "../../../../store/routes.js";
import { parseConfigMap } from "../../../../sync/translate/ca-bundles.js";
import { parseBackendTLSPolicy } from "../../../../sync/translate/gateway/backend-tls-objects.js";
import { translateBackendTlsPolicies } from "../../../../sync/translate/gateway/backend-tls-policies.js";
import { routeRecord, routeRule } from "../../../e2e/support/contract-layout.js";
import { createTestAuthority } from "../../../support/certificates.js";
import { CONTROLLER, service } from "./fixtures.js";

/** BackendTLSPolicy translation (Gateway API v1): validation, conflicts, ports in force, status toward Gateways. */
const CA = createTestAuthority("backend tls table CA");

type Json = Record<string, unknown>;

function policy(name: string, spec: Json, createdAt = "2024-01-01T00:00:00Z") {
  const parsed = parseBackendTLSPolicy({
    metadata: { name, namespace: "infra", generation: 2, creationTimestamp: createdAt },
    spec: {
      targetRefs: [{ group: "", kind: "Service", name: "secure" }],
      validation: {
        caCertificateRefs: [{ group: "", kind: "ConfigMap", name: "ca" }],
        hostname: "abc.example.com",
      },
      ...spec,
    },
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

function configMap(name: string, data: Record<string, string>) {
  const parsed = parseConfigMap({ metadata: { name, namespace: "infra", resourceVersion: "7" }, data });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

const SECURE = service("secure", "infra", [
  { name: "https", port: 443 },
  { name: "other", port: 8443 },
]);

/** An HTTPRoute record attached to infra/gw that sends to infra/secure:443. */
const ROUTE: RouteRecord = {
  ...routeRecord("httproute:infra/to-secure", {
    hostnames: ["abc.example.com"],
    rules: [routeRule([{ service: "infra/secure", port: 443, weight: 1 }])],
  }),
  listeners: [{ gateway: "infra/gw", port: 80, hostnames: [] }],
};

function translate(
  policies: ReturnType<typeof policy>[],
  configMaps = [configMap("ca", { "ca.crt": CA.cert })],
) {
  return translateBackendTlsPolicies({
    controllerName: CONTROLLER,
    policies,
    configMaps,
    services: [SECURE],
    routes: [ROUTE],
  });
}

const conditionsOf = (result: ReturnType<typeof translate>, key: string) =>
  (result.statuses.get(key)?.[0]?.conditions ?? []).map(
    (item) => `${item.type}=${item.status}/${item.reason}`,
  );

describe("BackendTLSPolicy translation", () => {
  it("puts a valid policy in force on every port of its Service, with its record and status toward the route's Gateway", () => {
    const result = translate([policy("valid", {})]);
    expect(result.records).toMatchObject([
      {
        kind: "policy",
        id: "infra/valid",
        hostname: "abc.example.com",
        subjectAltNames: [],
        trust: { pem: expect.stringContaining("BEGIN CERTIFICATE") },
      },
    ]);
    expect([...(result.ports.get("infra/secure") ?? [])]).toEqual([
      [443, "infra/valid"],
      [8443, "infra/valid"],
    ]);
    const [ancestor] = result.statuses.get("infra/valid") ?? [];
    expect(ancestor?.ancestorRef).toEqual({
      group: "gateway.networking.k8s.io",
      kind: "Gateway",
      namespace: "infra",
      name: "gw",
    });
    expect(ancestor?.controllerName).toBe(CONTROLLER);
    expect(conditionsOf(result, "infra/valid")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ]);
    expect(ancestor?.conditions[0]?.observedGeneration).toBe(2);
  });

  it.each([
    ["a ConfigMap that does not exist", [], "NoValidCACertificate", "InvalidCACertificateRef"],
    ["a ConfigMap without ca.crt", [configMap("ca", {})], "NoValidCACertificate", "InvalidCACertificateRef"],
    [
      "a ca.crt that is no certificate",
      [configMap("ca", { "ca.crt": "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----" })],
      "NoValidCACertificate",
      "InvalidCACertificateRef",
    ],
  ])(
    "refuses %s: Accepted=False/%s, ResolvedRefs=False/%s, no record, the ports still named (refused, not cleartext)",
    (_case, configMaps, accepted, resolved) => {
      const result = translate([policy("broken", {})], configMaps);
      expect(conditionsOf(result, "infra/broken")).toEqual([
        `Accepted=False/${accepted}`,
        `ResolvedRefs=False/${resolved}`,
      ]);
      expect(result.records).toEqual([]);
      expect(result.ports.get("infra/secure")?.get(443)).toBe("infra/broken");
    },
  );

  it("refuses a caCertificateRef of another kind: ResolvedRefs=False/InvalidKind", () => {
    const result = translate([
      policy("kind", {
        validation: {
          caCertificateRefs: [{ group: "invalid.io", kind: "InvalidKind", name: "x" }],
          hostname: "abc.example.com",
        },
      }),
    ]);
    expect(conditionsOf(result, "infra/kind")).toEqual([
      "Accepted=False/NoValidCACertificate",
      "ResolvedRefs=False/InvalidKind",
    ]);
  });

  it("keeps the valid bundles of several refs in force while saying one did not resolve", () => {
    const result = translate([
      policy("mixed", {
        validation: {
          caCertificateRefs: [
            { group: "", kind: "ConfigMap", name: "ca" },
            { group: "", kind: "ConfigMap", name: "gone" },
          ],
          hostname: "abc.example.com",
        },
      }),
    ]);
    expect(conditionsOf(result, "infra/mixed")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=False/InvalidCACertificateRef",
    ]);
    expect(result.records).toHaveLength(1);
  });

  it.each([
    [
      "System roots",
      { wellKnownCACertificates: "System", hostname: "abc.example.com" },
      "Accepted=True/Accepted",
    ],
    [
      "another well-known set",
      { wellKnownCACertificates: "example.com/roots", hostname: "abc.example.com" },
      "Accepted=False/Invalid",
    ],
    [
      "both CA refs and a well-known set",
      {
        wellKnownCACertificates: "System",
        caCertificateRefs: [{ group: "", kind: "ConfigMap", name: "ca" }],
        hostname: "abc.example.com",
      },
      "Accepted=False/Invalid",
    ],
    ["neither", { hostname: "abc.example.com" }, "Accepted=False/Invalid"],
    [
      "a wildcard hostname",
      { wellKnownCACertificates: "System", hostname: "*.example.com" },
      "Accepted=False/Invalid",
    ],
  ])("reads %s", (_case, validation, accepted) => {
    const result = translate([policy("roots", { validation })]);
    expect(conditionsOf(result, "infra/roots")[0]).toBe(accepted);
    if (accepted.startsWith("Accepted=True")) expect(result.records[0]?.trust).toEqual({ system: true });
  });

  it("carries Hostname and URI subjectAltNames, lower-casing names", () => {
    const result = translate([
      policy("sans", {
        validation: {
          caCertificateRefs: [{ group: "", kind: "ConfigMap", name: "ca" }],
          hostname: "ABC.example.com",
          subjectAltNames: [
            { type: "URI", uri: "spiffe://abc.example.com/test-identity" },
            { type: "Hostname", hostname: "Abc.Example.com" },
          ],
        },
      }),
    ]);
    expect(result.records[0]).toMatchObject({
      hostname: "abc.example.com",
      subjectAltNames: [
        { type: "URI", uri: "spiffe://abc.example.com/test-identity" },
        { type: "Hostname", hostname: "abc.example.com" },
      ],
    });
  });

  it("keeps the oldest of two policies on the same target, then the first by name; the other is Conflicted", () => {
    const result = translate([
      policy("b-older", {}, "2024-01-01T00:00:00Z"),
      policy("a-newer", {}, "2024-02-01T00:00:00Z"),
      policy("c-older-too", {}, "2024-01-01T00:00:00Z"),
    ]);
    expect(conditionsOf(result, "infra/b-older")[0]).toBe("Accepted=True/Accepted");
    expect(conditionsOf(result, "infra/a-newer")[0]).toBe("Accepted=False/Conflicted");
    expect(conditionsOf(result, "infra/c-older-too")[0]).toBe("Accepted=False/Conflicted");
    expect(result.records.map((record) => record.id)).toEqual(["infra/b-older"]);
    expect(result.ports.get("infra/secure")?.get(443)).toBe("infra/b-older");
  });

  it("lets a policy for one port take it from a policy for the whole Service, both accepted", () => {
    const result = translate([
      policy("whole", {}),
      policy("section", {
        targetRefs: [{ group: "", kind: "Service", name: "secure", sectionName: "https" }],
      }),
    ]);
    expect([...(result.ports.get("infra/secure") ?? [])]).toEqual([
      [443, "infra/section"],
      [8443, "infra/whole"],
    ]);
    expect(conditionsOf(result, "infra/whole")[0]).toBe("Accepted=True/Accepted");
    expect(conditionsOf(result, "infra/section")[0]).toBe("Accepted=True/Accepted");
  });

  it("writes no ancestor for a policy no route of our Gateways reaches, and ignores targets that are not Services", () => {
    const result = translate([
      policy("elsewhere", { targetRefs: [{ group: "", kind: "Service", name: "unrouted" }] }),
      policy("not-a-service", { targetRefs: [{ group: "apps", kind: "Deployment", name: "secure" }] }),
    ]);
    expect(result.statuses.get("infra/elsewhere")).toEqual([]);
    expect(result.statuses.get("infra/not-a-service")).toEqual([]);
    expect(result.ports.size).toBe(0);
  });
});
