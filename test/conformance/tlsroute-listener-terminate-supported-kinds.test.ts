import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestAuthority, tlsSecret } from "../support/certificates.js";
import { gatewayObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { asFound, type ExpectedListener, untilListeners } from "./support/gateway-listeners.js";
import { terminateListener } from "./support/tls-route-fixture.js";

/**
 * Conformance TLSRouteListenerTerminateSupportedKinds: edgeslice claims TLSRouteModeTerminate, so a TLS
 * listener in mode Terminate with a certificateRef is Accepted=True and lists TLSRoute in supportedKinds,
 * before any route attaches.
 */
describe("conformance TLSRouteListenerTerminateSupportedKinds", () => {
  let world: Conformance;
  const GATEWAY = "gateway-tlsroute-terminate-supported";
  beforeAll(async () => {
    const certificate = createTestAuthority("tls-checks CA").issue(["tls.example.com"]);
    world = await startConformance({
      label: "tlsroute-terminate-kinds",
      objects: [
        tlsSecret(INFRA, "tls-terminate-checks-certificate", certificate),
        gatewayObject(GATEWAY, [terminateListener("tls-terminate", 8443)]),
      ],
    });
  }, 30_000);
  afterAll(() => world?.stop());

  it("says Accepted=True and supportedKinds TLSRoute on the Terminate listener", async () => {
    const expected: ExpectedListener[] = [
      {
        name: "tls-terminate",
        supportedKinds: ["gateway.networking.k8s.io/TLSRoute"],
        conditions: [
          "Accepted=True/Accepted",
          "ResolvedRefs=True/ResolvedRefs",
          "Programmed=True/Programmed",
        ],
        attachedRoutes: 0,
      },
    ];
    expect(await untilListeners(world.cluster.kube, GATEWAY, expected)).toEqual(asFound(expected));
  });
});
