import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { readListeners } from "./support/gateway-listeners.js";
import { untilParents } from "./support/route-parents.js";
import { passthroughListener, tlsRouteObject } from "./support/tls-route-fixture.js";

/**
 * Conformance TLSRouteInvalidNoMatchingListenerHostname: TLSRoutes none of whose hostnames meets the listener's
 * (an exact one, then a wildcard) are Accepted=False/NoMatchingListenerHostname, accepted by no parent, and
 * counted on no listener.
 */
const CASES = [
  {
    gateway: "gateway-tls-exact-hostname",
    hostname: "www.example.com",
    route: "tlsroute-hostname-mismatch-1",
    hostnames: ["www.nomatch.com", "*.nomatch.com"],
  },
  {
    gateway: "gateway-tls-wildcard-hostname",
    hostname: "*.example.com",
    route: "tlsroute-hostname-mismatch-2",
    hostnames: ["www.different.com", "*.different.com"],
  },
] as const;

describe("conformance TLSRouteInvalidNoMatchingListenerHostname", () => {
  let world: Conformance;
  beforeAll(async () => {
    world = await startConformance({
      label: "tlsroute-no-hostname",
      objects: CASES.flatMap((item) => [
        gatewayObject(item.gateway, [passthroughListener("tls", { hostname: item.hostname })]),
        tlsRouteObject(item.route, {
          parentRefs: [{ name: item.gateway }],
          hostnames: item.hostnames,
          rules: [{ backendRefs: [{ name: "tls-backend", port: 443 }] }],
        }),
      ]),
    });
  }, 30_000);
  afterAll(() => world?.stop());

  it.each(CASES)(
    "refuses $route on $gateway with NoMatchingListenerHostname, and no listener counts it",
    async (item) => {
      const parents = await untilParents(
        world.cluster.kube,
        INFRA,
        item.route,
        (found) => found.length > 0,
        5_000,
        "TLSRoute",
      );
      expect(parents).toEqual([
        {
          parent: item.gateway,
          conditions: expect.arrayContaining(["Accepted=False/NoMatchingListenerHostname"]),
        },
      ]);
      expect(
        readListeners(world.cluster.kube, item.gateway).map((listener) => listener.attachedRoutes),
      ).toEqual([0]);
    },
  );
});
