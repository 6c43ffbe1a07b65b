import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestAuthority, tlsSecret } from "../support/certificates.js";
import { gatewayObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { asFound, type ExpectedListener, untilListeners } from "./support/gateway-listeners.js";
import { passthroughListener, terminateListener } from "./support/tls-route-fixture.js";

/**
 * Conformance TLSRouteListenerMixedTerminationNotSupported runs only for implementations that do not claim
 * TLSRouteModeMixed (it returns at once otherwise; without it, both listeners would be Accepted=False with
 * ProtocolConflict). edgeslice claims it: the router reads the ClientHello before it ends any TLS, so a
 * Terminate and a Passthrough listener on one port are both accepted, without conflict.
 */
describe("conformance TLSRouteListenerMixedTerminationNotSupported", () => {
  let world: Conformance;
  const GATEWAY = "gateway-tlsroute-mixed-termination-not-supported";
  beforeAll(async () => {
    const certificate = createTestAuthority("tls-checks CA").issue(["tls.example.com"]);
    world = await startConformance({
      label: "tlsroute-mixed-conflict",
      objects: [
        tlsSecret(INFRA, "tls-terminate-checks-certificate", certificate),
        gatewayObject(GATEWAY, [
          terminateListener("tls-terminate", 8883),
          passthroughListener("tls-passthrough", { port: 8883, hostname: "abc.example.com" }),
        ]),
      ],
    });
  }, 30_000);
  afterAll(() => world?.stop());

  it("accepts both listeners of the port, with no ProtocolConflict", async () => {
    const expected: ExpectedListener[] = ["tls-terminate", "tls-passthrough"].map((name) => ({
      name,
      supportedKinds: ["gateway.networking.k8s.io/TLSRoute"],
      conditions: ["Accepted=True/Accepted", "Conflicted=False/NoConflicts"],
      attachedRoutes: 0,
    }));
    expect(await untilListeners(world.cluster.kube, GATEWAY, expected)).toEqual(asFound(expected));
  });
});
