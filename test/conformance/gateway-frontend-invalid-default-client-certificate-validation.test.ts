import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  answeredBy,
  caRef,
  clientCertificateWorld,
  gatewayWithFrontend,
  httpGet,
  httpsGet,
  httpsListener,
} from "./support/client-certificates.js";
import { backend, httpListener, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { conditionOf, startTlsConformance, type TlsConformance, untilTrue } from "./support/tls-fixture.js";

/**
 * Conformance GatewayFrontendInvalidDefaultClientCertificateValidation: a default client validation whose only
 * CA ConfigMap does not exist makes the HTTPS listener ResolvedRefs=False/InvalidCACertificateRef,
 * Accepted=False/NoValidCACertificate and not Programmed, and HTTPS requests to it fail; the HTTP listener of
 * the same Gateway (a perPort entry for port 80 changes nothing for HTTP) stays accepted and serves.
 */
const GATEWAY = "invalid-default-client-validation-config";
const certificates = clientCertificateWorld();

describe("conformance GatewayFrontendInvalidDefaultClientCertificateValidation", () => {
  let world: TlsConformance;
  beforeAll(async () => {
    world = await startTlsConformance({
      label: "client-cert-default",
      objects: [
        ...certificates.objects,
        gatewayWithFrontend(
          GATEWAY,
          {
            default: { validation: { caCertificateRefs: [caRef("does-not-exist")] } },
            perPort: [
              {
                port: 80,
                tls: {
                  validation: { caCertificateRefs: [caRef("tls-validity-checks-per-port-ca-certificate")] },
                },
              },
            ],
          },
          [
            httpsListener("https", 443),
            httpListener("http", 80, { allowedRoutes: { namespaces: { from: "Same" } } }),
          ],
        ),
        httpRouteObject(GATEWAY, {
          parentRefs: [{ name: GATEWAY }],
          hostnames: ["example.org"],
          rules: [{ backendRefs: [backend("infra-backend-v1")] }],
        }),
      ],
      routers: { router: `${INFRA}/${GATEWAY}` },
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  it("keeps the HTTP listener accepted, resolved and programmed, serving example.org", async () => {
    const conditions = await untilTrue(
      () => world.listenerConditions(GATEWAY, "http"),
      (found) => conditionOf(found, "Programmed")?.status === "True",
    );
    for (const type of ["ResolvedRefs", "Accepted", "Programmed"])
      expect(conditionOf(conditions, type)?.status).toBe("True");
    const answer = await untilTrue(
      () => httpGet(world.router.url, "example.org"),
      (found) => answeredBy(found, `${INFRA}/infra-backend-v1`),
    );
    expect(answeredBy(answer, `${INFRA}/infra-backend-v1`)).toBe(true);
  });

  it("refuses the HTTPS listener (InvalidCACertificateRef, NoValidCACertificate) and fails HTTPS requests to it", async () => {
    const conditions = await untilTrue(
      () => world.listenerConditions(GATEWAY, "https"),
      (found) => conditionOf(found, "Accepted")?.status === "False",
    );
    expect(conditionOf(conditions, "ResolvedRefs")).toEqual({
      status: "False",
      reason: "InvalidCACertificateRef",
    });
    expect(conditionOf(conditions, "Accepted")).toEqual({ status: "False", reason: "NoValidCACertificate" });
    expect(conditionOf(conditions, "Programmed")?.status).toBe("False");
    const answer = await httpsGet(world.tlsPort(), { sni: "example.org", ca: certificates.serverCa.cert });
    expect("error" in answer).toBe(true);
  });
});
