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
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";
import { startTlsConformance, type TlsConformance, untilTrue } from "./support/tls-fixture.js";

/**
 * Conformance GatewayFrontendClientCertificateValidation: the Gateway's default client certificate validation
 * applies to its HTTPS listener on 443, its perPort entry to the one on 8443 (the router serves listener port
 * 8443 on a port of its own, HTTPS_LISTENER_PORTS); a client certificate of the port's CA is let in and routed,
 * one of the other CA is refused.
 */
const GATEWAY = "client-validation-default";
const certificates = clientCertificateWorld();

describe("conformance GatewayFrontendClientCertificateValidation", () => {
  let world: TlsConformance;
  beforeAll(async () => {
    world = await startTlsConformance({
      label: "client-cert-validation",
      objects: [
        ...certificates.objects,
        gatewayWithFrontend(
          GATEWAY,
          {
            default: { validation: { caCertificateRefs: [caRef("tls-validity-checks-ca-certificate")] } },
            perPort: [
              {
                port: 8443,
                tls: {
                  validation: { caCertificateRefs: [caRef("tls-validity-checks-per-port-ca-certificate")] },
                },
              },
            ],
          },
          [httpsListener("https", 443), httpsListener("https-with-hostname", 8443, "second-example.org")],
        ),
        httpRouteObject("client-certificate-validation-https-test", {
          parentRefs: [{ name: GATEWAY }],
          hostnames: ["example.org"],
          rules: [{ backendRefs: [backend("infra-backend-v1")] }],
        }),
        httpRouteObject("client-certificate-validation-https-test-no-hostname", {
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

  const get = (listenerPort: number, sni: string, client?: typeof certificates.client) =>
    httpsGet(world.tlsPort(undefined, listenerPort), {
      sni,
      ca: certificates.serverCa.cert,
      ...(client ? { client } : {}),
    });

  it("accepts both routes with their refs resolved", async () => {
    for (const route of [
      "client-certificate-validation-https-test",
      "client-certificate-validation-https-test-no-hostname",
    ]) {
      const parents = await untilParents(world.cluster.kube, INFRA, route, (found) =>
        acceptedAndResolved(found, 1),
      );
      expect(acceptedAndResolved(parents, 1)).toBe(true);
    }
  });

  it("validates the default configuration on 443: the default CA's client is served, the per-port CA's refused", async () => {
    const served = await untilTrue(
      () => get(443, "example.org", certificates.client),
      (answer) => answeredBy(answer, `${INFRA}/infra-backend-v1`),
    );
    expect(answeredBy(served, `${INFRA}/infra-backend-v1`)).toBe(true);
    expect("error" in (await get(443, "example.org", certificates.perPortClient))).toBe(true);
    expect("error" in (await get(443, "example.org"))).toBe(true);
  });

  it("validates the per-port configuration on 8443: the per-port CA's client is served, the default CA's refused", async () => {
    const served = await untilTrue(
      () => get(8443, "second-example.org", certificates.perPortClient),
      (answer) => answeredBy(answer, `${INFRA}/infra-backend-v2`),
    );
    expect(answeredBy(served, `${INFRA}/infra-backend-v2`)).toBe(true);
    expect("error" in (await get(8443, "second-example.org", certificates.client))).toBe(true);
  });
});
