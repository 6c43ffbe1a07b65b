import { X509Certificate } from "node:crypto";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, hostClient } from "../e2e/support/host-client.js";
import { tlsSecret } from "../support/certificates.js";
import { type HttpsEcho, startHttpsEcho } from "../support/https-echo.js";
import { caPolicy, serviceAt, untilAncestors } from "./support/backend-tls-objects.js";
import { gatewayObject, httpListener, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { startTlsChecksBackend, type TlsChecksBackend, tlsEcho } from "./support/tls-checks-backend.js";
import { conditionOf, startTlsConformance, type TlsConformance, untilTrue } from "./support/tls-fixture.js";

/**
 * Conformance GatewayTLSBackendClientCertificate: a Gateway whose spec.tls.backend.clientCertificateRef names
 * the Secret tls-checks-client-certificate has ResolvedRefs=True, and a request through its route to a TLS
 * backend that requires a client certificate signed by the tls-checks CA (a BackendTLSPolicy on its Service)
 * is answered 200 by it, which saw that Secret's certificate.
 */
const GATEWAY = "gateway-tls-backend-client-certificate";
const SERVICE = "tls-backend-with-client-cert-validation";

let world: TlsConformance;
let tls: TlsChecksBackend;
let validating: HttpsEcho;
let pool: Pool;
let clientCertificate: { cert: string; key: string };

beforeAll(async () => {
  tls = await startTlsChecksBackend();
  clientCertificate = tls.authority.issue(["gateway-client.example.com"]);
  validating = await startHttpsEcho(`${INFRA}/${SERVICE}`, tls.authority.issue(["abc.example.com"]), {
    clientCa: tls.authority.cert,
  });
  const gateway = gatewayObject(GATEWAY, [
    httpListener("http", 80, { allowedRoutes: { namespaces: { from: "Same" } } }),
  ]);
  world = await startTlsConformance({
    label: "backend-client-cert",
    objects: [
      {
        ...gateway,
        spec: {
          ...(gateway.spec as Record<string, unknown>),
          tls: {
            backend: {
              clientCertificateRef: { group: "", kind: "Secret", name: "tls-checks-client-certificate" },
            },
          },
        },
      },
      tlsSecret(INFRA, "tls-checks-client-certificate", clientCertificate),
      httpRouteObject(GATEWAY, {
        parentRefs: [{ name: GATEWAY, namespace: INFRA }],
        hostnames: ["abc.example.com"],
        rules: [
          { backendRefs: [{ name: SERVICE, port: 443 }], matches: [{ path: { type: "Exact", value: "/" } }] },
        ],
      }),
      ...tls.configMaps,
      caPolicy("gateway-tls-backend-client-certificate-test", SERVICE),
      ...serviceAt(SERVICE, validating, [{ name: "https", port: 443 }]),
    ],
  });
  pool = new Pool(world.router.url, { connections: 2 });
}, 60_000);

afterAll(async () => {
  await pool?.destroy();
  await world?.stop();
  await validating?.close();
  await tls?.close();
});

describe("conformance GatewayTLSBackendClientCertificate", () => {
  it("resolves the Gateway's backend client certificate and accepts the policy toward it", async () => {
    const own = await untilTrue(
      () =>
        ((world.cluster.kube.get("Gateway", INFRA, GATEWAY)?.status as { conditions?: [] } | undefined)
          ?.conditions ?? []) as { type: string; status: string; reason: string }[],
      (found) => conditionOf(found, "ResolvedRefs")?.status === "True",
    );
    expect(conditionOf(own, "ResolvedRefs")).toEqual({ status: "True", reason: "ResolvedRefs" });
    expect(conditionOf(own, "Accepted")).toEqual({ status: "True", reason: "Accepted" });
    const wanted = `${GATEWAY}: Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs`;
    expect(
      await untilAncestors(world.cluster.kube, "gateway-tls-backend-client-certificate-test", (lines) =>
        lines.includes(wanted),
      ),
    ).toEqual([wanted]);
  });

  it("presents the configured client certificate to the backend, which answers 200", async () => {
    const send = (): Promise<Answer> => hostClient(pool, "").send("abc.example.com", "/");
    const answer = await untilTrue(send, (found) => found.status === 200, 10_000);
    expect(answer.status).toBe(200);
    expect(tlsEcho(answer)).toMatchObject({
      sni: "abc.example.com",
      clientCertificate: new X509Certificate(clientCertificate.cert).fingerprint256,
    });
  });
});
