import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestAuthority, tlsSecret } from "../support/certificates.js";
import { gatewayObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { asFound, type ExpectedListener, untilListeners } from "./support/gateway-listeners.js";

/**
 * Conformance TLSRouteListenerTerminateNotSupported runs only for implementations that do not claim
 * TLSRouteModeTerminate (it returns at once otherwise). edgeslice claims it, so the suite's listener in mode
 * Terminate is accepted with TLSRoute among its kinds; a TLS mode the API does not define is still refused
 * with the reason that test wants (UnsupportedValue), taking no route.
 */
describe("conformance TLSRouteListenerTerminateNotSupported", () => {
  let world: Conformance;
  const GATEWAY = "gateway-tlsroute-terminate-unsupported";
  const terminate = {
    name: "tls-terminate",
    port: 8443,
    protocol: "TLS",
    hostname: "terminate.example.com",
    allowedRoutes: { namespaces: { from: "Same" }, kinds: [{ kind: "TLSRoute" }] },
    tls: { mode: "Terminate", certificateRefs: [{ name: "tls-terminate-checks-certificate" }] },
  };
  beforeAll(async () => {
    const certificate = createTestAuthority("tls-checks CA").issue(["terminate.example.com"]);
    world = await startConformance({
      label: "tlsroute-terminate",
      objects: [
        tlsSecret(INFRA, "tls-terminate-checks-certificate", certificate),
        gatewayObject(GATEWAY, [
          terminate,
          { ...terminate, name: "tls-unknown-mode", port: 8444, tls: { mode: "Reencrypt" } },
        ]),
      ],
    });
  }, 30_000);
  afterAll(() => world?.stop());

  it("accepts the Terminate listener, and says Accepted=False/UnsupportedValue for an unknown mode", async () => {
    const expected: ExpectedListener[] = [
      {
        name: "tls-terminate",
        supportedKinds: ["gateway.networking.k8s.io/TLSRoute"],
        conditions: ["Accepted=True/Accepted"],
        attachedRoutes: 0,
      },
      {
        name: "tls-unknown-mode",
        supportedKinds: [],
        conditions: ["Accepted=False/UnsupportedValue"],
        attachedRoutes: 0,
      },
    ];
    expect(await untilListeners(world.cluster.kube, GATEWAY, expected)).toEqual(asFound(expected));
  });
});
