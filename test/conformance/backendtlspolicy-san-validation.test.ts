import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendTlsPolicyObject, untilAncestors } from "./support/backend-tls-objects.js";
import { httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { expectReadableBySuiteClient } from "./support/routing-cases.js";
import { startTlsChecksBackend, type TlsChecksBackend, tlsEcho } from "./support/tls-checks-backend.js";

/**
 * Conformance BackendTLSPolicySANValidation: six policies on six Services of the suite's TLS backend (its
 * certificate names abc.example.com and carries spiffe://abc.example.com/test-identity), all with hostname
 * abc.example.com and subjectAltNames: a matching Hostname, a matching URI, and both, are answered 200 by the
 * backend; another Hostname, another URI, and two others, are refused. Each policy is Accepted toward the
 * route's Gateway.
 */
const HOST = "abc.example.com";
const CASES = {
  "san-dns": [{ type: "Hostname", hostname: HOST }],
  "san-dns-mismatch": [{ type: "Hostname", hostname: "dce.example.com" }],
  "san-uri": [{ type: "URI", uri: "spiffe://abc.example.com/test-identity" }],
  "san-uri-mismatch": [{ type: "URI", uri: "spiffe://def.example.com/test-identity" }],
  "multiple-sans": [
    { type: "URI", uri: "spiffe://abc.example.com/test-identity" },
    { type: "Hostname", hostname: HOST },
  ],
  "multiple-mismatch-sans": [
    { type: "URI", uri: "spiffe://def.example.com/test-identity" },
    { type: "Hostname", hostname: "def.example.com" },
  ],
} as const;
type Case = keyof typeof CASES;
const service = (name: Case) => `backendtlspolicy-${name}-test`;

let world: Conformance;
let tls: TlsChecksBackend;

beforeAll(async () => {
  tls = await startTlsChecksBackend();
  const names = Object.keys(CASES) as Case[];
  world = await startConformance({
    label: "btls-san",
    objects: [
      httpRouteObject("backendtlspolicy-san-test", {
        parentRefs: [{ name: "same-namespace", namespace: INFRA }],
        hostnames: [HOST],
        rules: names.map((name) => ({
          backendRefs: [{ name: service(name), port: 443 }],
          matches: [{ path: { type: "Exact", value: `/backendtlspolicy-${name}` } }],
        })),
      }),
      ...tls.configMaps,
      ...names.map((name) =>
        backendTlsPolicyObject(name, {
          targetRefs: [{ group: "", kind: "Service", name: service(name), sectionName: "btls" }],
          validation: {
            caCertificateRefs: [{ group: "", kind: "ConfigMap", name: "tls-checks-ca-certificate" }],
            hostname: HOST,
            subjectAltNames: CASES[name],
          },
        }),
      ),
      ...names.flatMap((name) => tls.serviceObjects(service(name), [{ name: "btls", port: 443 }])),
    ],
  });
}, 30_000);

afterAll(async () => {
  await world?.stop();
  await tls?.close();
});

const request = (name: Case) => ({ host: HOST, path: `/backendtlspolicy-${name}` });

describe("conformance BackendTLSPolicySANValidation", () => {
  it("accepts every policy toward same-namespace", async () => {
    for (const name of Object.keys(CASES)) {
      const lines = await untilAncestors(world.cluster.kube, name, (found) => found.length > 0);
      expect(lines).toEqual([expect.stringMatching(/^same-namespace: Accepted=True\/Accepted /)]);
    }
  });

  for (const name of ["san-dns", "san-uri", "multiple-sans"] as const) {
    it(`answers 200 from the TLS backend, SNI ${HOST}, for ${name}`, async () => {
      const answer = await world.until(request(name), (found) => found.status === 200);
      expect(answer.status).toBe(200);
      expect(tlsEcho(answer)).toMatchObject({ path: `/backendtlspolicy-${name}`, sni: HOST });
    });
  }

  for (const name of ["san-dns-mismatch", "san-uri-mismatch", "multiple-mismatch-sans"] as const) {
    it(`refuses ${name}: 5xx, and the backend never gets the request`, async () => {
      await world.until(request("san-dns"), (found) => found.status === 200);
      const before = tls.backend.hits();
      const answer = await world.send(request(name));
      expectReadableBySuiteClient(answer);
      expect(answer.status).toBe(502);
      expect(answer.echo).toBeUndefined();
      expect(tls.backend.hits()).toBe(before);
    });
  }
});
