import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { asFound, type ExpectedListener, untilListeners } from "./support/gateway-listeners.js";

/**
 * Conformance TLSRouteListenerTerminateNotSupported: edgeslice does not claim TLSRouteModeTerminate, so a TLS
 * listener in mode Terminate is Accepted=False/UnsupportedValue, supports no kind and takes no route.
 */
describe("conformance TLSRouteListenerTerminateNotSupported", () => {
  let world: Conformance;
  const GATEWAY = "gateway-tlsroute-terminate-unsupported";
  beforeAll(async () => {
    world = await startConformance({
      label: "tlsroute-terminate",
      objects: [
        gatewayObject(GATEWAY, [
          {
            name: "tls-terminate",
            port: 8443,
            protocol: "TLS",
            hostname: "terminate.example.com",
            allowedRoutes: { namespaces: { from: "Same" }, kinds: [{ kind: "TLSRoute" }] },
            tls: { mode: "Terminate", certificateRefs: [{ name: "tls-terminate-checks-certificate" }] },
          },
        ]),
      ],
    });
  }, 30_000);
  afterAll(() => world?.stop());

  it("says Accepted=False/UnsupportedValue on the Terminate listener", async () => {
    const expected: ExpectedListener[] = [
      {
        name: "tls-terminate",
        supportedKinds: [],
        conditions: ["Accepted=False/UnsupportedValue"],
        attachedRoutes: 0,
      },
    ];
    expect(await untilListeners(world.cluster.kube, GATEWAY, expected)).toEqual(asFound(expected));
  });
});
