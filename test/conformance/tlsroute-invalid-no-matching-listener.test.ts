import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject, httpListener, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { readListeners } from "./support/gateway-listeners.js";
import { untilParents } from "./support/route-parents.js";
import { passthroughListener, tlsRouteObject } from "./support/tls-route-fixture.js";

/**
 * Conformance TLSRouteInvalidNoMatchingListener: a TLSRoute on a Gateway with only an HTTP listener, or only
 * an HTTPS one, is Accepted=False/NotAllowedByListeners; one naming a sectionName the Gateway does not have is
 * Accepted=False/NoMatchingParent. None is accepted by any parent, and the HTTP and HTTPS Gateways count none.
 */
const route = (name: string, parentRef: Record<string, unknown>) =>
  tlsRouteObject(name, {
    parentRefs: [parentRef],
    hostnames: ["tls.example.com"],
    rules: [{ backendRefs: [{ name: "tls-backend", port: 443 }] }],
  });
const same = { namespaces: { from: "Same" } };

const CASES = [
  ["tlsroute-not-allowed-protocol-http", "gateway-tlsroute-http-only", "NotAllowedByListeners", true],
  ["tlsroute-not-allowed-protocol-https", "gateway-tlsroute-https-only", "NotAllowedByListeners", true],
  ["tlsroute-no-matching-section-name", "gateway-tlsroute-tls-passthrough-only", "NoMatchingParent", false],
] as const;

describe("conformance TLSRouteInvalidNoMatchingListener", () => {
  let world: Conformance;
  beforeAll(async () => {
    world = await startConformance({
      label: "tlsroute-no-listener",
      objects: [
        gatewayObject("gateway-tlsroute-tls-passthrough-only", [
          { ...passthroughListener("tls-passthrough"), allowedRoutes: same },
        ]),
        gatewayObject("gateway-tlsroute-http-only", [httpListener("http", 80, { allowedRoutes: same })]),
        gatewayObject("gateway-tlsroute-https-only", [
          {
            name: "https",
            port: 443,
            protocol: "HTTPS",
            allowedRoutes: same,
            tls: {
              mode: "Terminate",
              certificateRefs: [{ name: "tls-validity-checks-certificate", namespace: INFRA }],
            },
          },
        ]),
        route("tlsroute-not-allowed-protocol-http", { name: "gateway-tlsroute-http-only" }),
        route("tlsroute-not-allowed-protocol-https", { name: "gateway-tlsroute-https-only" }),
        route("tlsroute-no-matching-section-name", {
          name: "gateway-tlsroute-tls-passthrough-only",
          sectionName: "nonexistent-listener",
        }),
      ],
    });
  }, 30_000);
  afterAll(() => world?.stop());

  it.each(CASES)(
    "refuses %s on %s with %s, and no parent accepts it",
    async (name, gateway, reason, counted) => {
      const parents = await untilParents(
        world.cluster.kube,
        INFRA,
        name,
        (found) => found.some((parent) => parent.conditions.includes(`Accepted=False/${reason}`)),
        5_000,
        "TLSRoute",
      );
      expect(parents).toEqual([
        {
          parent: expect.stringMatching(new RegExp(`^${gateway}`)),
          conditions: expect.arrayContaining([`Accepted=False/${reason}`]),
        },
      ]);
      if (counted) {
        expect(readListeners(world.cluster.kube, gateway).map((listener) => listener.attachedRoutes)).toEqual(
          [0],
        );
      }
    },
  );
});
