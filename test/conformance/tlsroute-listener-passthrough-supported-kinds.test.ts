import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { asFound, type ExpectedListener, untilListeners } from "./support/gateway-listeners.js";
import { passthroughListener } from "./support/tls-route-fixture.js";

/**
 * Conformance TLSRouteListenerPassthroughSupportedKinds: a Passthrough TLS listener allowing TCPRoute and
 * TLSRoute supports TLSRoute, and says ResolvedRefs=False/InvalidRouteKinds for the kind it does not serve.
 */
describe("conformance TLSRouteListenerPassthroughSupportedKinds", () => {
  let world: Conformance;
  const GATEWAY = "gateway-tlsroute-passthrough-supported-kind";
  beforeAll(async () => {
    world = await startConformance({
      label: "tlsroute-kinds",
      objects: [
        gatewayObject(GATEWAY, [
          passthroughListener("tls-passthrough", {
            allowedRoutes: {
              namespaces: { from: "Same" },
              kinds: [{ kind: "TCPRoute" }, { kind: "TLSRoute" }],
            },
          }),
        ]),
      ],
    });
  }, 30_000);
  afterAll(() => world?.stop());

  it("lists TLSRoute in supportedKinds and says ResolvedRefs=False/InvalidRouteKinds", async () => {
    const expected: ExpectedListener[] = [
      {
        name: "tls-passthrough",
        supportedKinds: ["gateway.networking.k8s.io/TLSRoute"],
        conditions: ["ResolvedRefs=False/InvalidRouteKinds"],
        attachedRoutes: 0,
      },
    ];
    expect(await untilListeners(world.cluster.kube, GATEWAY, expected)).toEqual(asFound(expected));
  });
});
