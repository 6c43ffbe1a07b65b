import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  answeredBy,
  caRef,
  clientCertificateWorld,
  gatewayWithFrontend,
  httpsGet,
  httpsListener,
} from "./support/client-certificates.js";
import { backend, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { readConditions } from "./support/latest-conditions.js";
import { startTlsConformance, type TlsConformance, untilTrue } from "./support/tls-fixture.js";

/**
 * Conformance GatewayFrontendClientCertificateValidationInsecureFallback: with mode AllowInsecureFallback, by
 * default and per port, the Gateway says InsecureFrontendValidationMode=True/ConfigurationChanged and every
 * HTTPS client is served: with a certificate of the port's CA, of the other CA, or with none.
 */
const GATEWAY = "client-validation-insecure-fallback";
const certificates = clientCertificateWorld();
const fallback = (configMap: string) => ({
  validation: { mode: "AllowInsecureFallback", caCertificateRefs: [caRef(configMap)] },
});

describe("conformance GatewayFrontendClientCertificateValidationInsecureFallback", () => {
  let world: TlsConformance;
  beforeAll(async () => {
    world = await startTlsConformance({
      label: "client-cert-fallback",
      objects: [
        ...certificates.objects,
        gatewayWithFrontend(
          GATEWAY,
          {
            default: fallback("tls-validity-checks-ca-certificate"),
            perPort: [{ port: 8443, tls: fallback("tls-validity-checks-per-port-ca-certificate") }],
          },
          [httpsListener("https", 443), httpsListener("https-with-hostname", 8443, "second-example.org")],
        ),
        httpRouteObject("client-cert-validation-insecure-fallback-test", {
          parentRefs: [{ name: GATEWAY }],
          hostnames: ["example.org"],
          rules: [{ backendRefs: [backend("infra-backend-v1")] }],
        }),
        httpRouteObject("client-cert-validation-insecure-fallback-test-no-hostname", {
          parentRefs: [{ name: GATEWAY, sectionName: "https-with-hostname" }],
          rules: [{ backendRefs: [backend("infra-backend-v2")] }],
        }),
      ],
      routers: { router: `${INFRA}/${GATEWAY}` },
      env: { HTTPS_LISTENER_PORTS: "8443=0" },
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  it("says InsecureFrontendValidationMode=True/ConfigurationChanged on the Gateway", async () => {
    const conditions = await untilTrue(
      () => readConditions(world.cluster.kube, "Gateway", INFRA, GATEWAY).conditions,
      (found) => found.some((item) => item.type === "InsecureFrontendValidationMode"),
    );
    expect(conditions).toContainEqual(
      expect.objectContaining({
        type: "InsecureFrontendValidationMode",
        status: "True",
        reason: "ConfigurationChanged",
      }),
    );
  });

  it.each([
    [443, "example.org", "infra-backend-v1"],
    [8443, "second-example.org", "infra-backend-v2"],
  ] as const)(
    "serves every client on %s (%s): the port's CA's, the other CA's, and one without certificate",
    async (port, sni, name) => {
      const get = (client?: typeof certificates.client) =>
        httpsGet(world.tlsPort(undefined, port), {
          sni,
          ca: certificates.serverCa.cert,
          ...(client ? { client } : {}),
        });
      const expected = `${INFRA}/${name}`;
      await untilTrue(
        () => get(),
        (answer) => answeredBy(answer, expected),
      );
      for (const client of [certificates.client, certificates.perPortClient, undefined]) {
        expect(answeredBy(await get(client), expected)).toBe(true);
      }
    },
  );
});
