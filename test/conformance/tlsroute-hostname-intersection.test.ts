import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject } from "./support/conformance-base.js";
import {
  passthroughListener,
  rejected,
  startTlsRouteConformance,
  type TlsRouteConformance,
  tlsRouteObject,
} from "./support/tls-route-fixture.js";

/**
 * Conformance TLSRouteHostnameIntersection: TLSRoutes attach to a listener only through the hostnames they
 * share with it, and take connections only for that intersection. Four Gateways, each one Passthrough listener
 * on 443 (exact, a more specific wildcard, a less specific one, none), each served by routers of its own
 * (GATEWAYS), as each Gateway has its own address in the suite; each case dials them with the SNI the suite
 * sends.
 */
const route = (name: string, gateway: string, hostname: string, backend: string) =>
  tlsRouteObject(name, {
    parentRefs: [{ name: gateway, namespace: "gateway-conformance-infra" }],
    hostnames: [hostname],
    rules: [{ backendRefs: [{ name: backend, port: 443 }] }],
  });

const CASES = [
  {
    gateway: "gw-tlsroute-exact-hostname-x-1",
    listener: passthroughListener("listener-exact-hostname", { hostname: "abc.example.com" }),
    routes: [
      route(
        "tlsroute-more-specific-wc-hostname-x-1",
        "gw-tlsroute-exact-hostname-x-1",
        "*.example.com",
        "tls-backend",
      ),
    ],
    reach: [["abc.example.com", "tls-backend"]],
    reject: "non.matching.com",
  },
  {
    gateway: "gw-tlsroute-more-specific-wc-hostname-x-2",
    listener: passthroughListener("listener-more-specific-wc-hostname", { hostname: "*.example.com" }),
    routes: [
      route(
        "tlsroute-exact-hostname-x-2",
        "gw-tlsroute-more-specific-wc-hostname-x-2",
        "abc.example.com",
        "tls-backend",
      ),
      route(
        "tlsroute-less-specific-wc-hostname-x-2",
        "gw-tlsroute-more-specific-wc-hostname-x-2",
        "*.com",
        "tls-backend-2",
      ),
    ],
    reach: [
      ["abc.example.com", "tls-backend"],
      ["other.example.com", "tls-backend-2"],
    ],
    reject: "non.matching.com",
  },
  {
    gateway: "gw-tlsroute-less-specific-wc-hostname-x-3",
    listener: passthroughListener("listener-less-specific-wc-hostname", { hostname: "*.com" }),
    routes: [
      route(
        "tlsroute-exact-hostname-x-3",
        "gw-tlsroute-less-specific-wc-hostname-x-3",
        "abc.example.com",
        "tls-backend",
      ),
      route(
        "tlsroute-more-specific-wc-hostname-x-3",
        "gw-tlsroute-less-specific-wc-hostname-x-3",
        "*.example.com",
        "tls-backend-2",
      ),
    ],
    reach: [
      ["abc.example.com", "tls-backend"],
      ["other.example.com", "tls-backend-2"],
    ],
    reject: "non.matching.com",
  },
  {
    gateway: "gw-tlsroute-empty-hostname-x-4",
    listener: passthroughListener("listener-empty-hostname"),
    routes: [
      route(
        "tlsroute-exact-hostname-x-4",
        "gw-tlsroute-empty-hostname-x-4",
        "abc.example.com",
        "tls-backend",
      ),
      route(
        "tlsroute-less-specific-wc-hostname-x-4",
        "gw-tlsroute-empty-hostname-x-4",
        "*.com",
        "tls-backend-2",
      ),
    ],
    reach: [
      ["abc.example.com", "tls-backend"],
      ["other.example.com", "tls-backend-2"],
    ],
    reject: "non.matching.org",
  },
] as const;

describe("conformance TLSRouteHostnameIntersection", () => {
  let world: TlsRouteConformance;
  beforeAll(async () => {
    world = await startTlsRouteConformance({
      label: "tlsroute-intersection",
      objects: CASES.flatMap((item) => [gatewayObject(item.gateway, [item.listener]), ...item.routes]),
      routers: Object.fromEntries(
        CASES.map((item) => [item.gateway, `gateway-conformance-infra/${item.gateway}`]),
      ),
    });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  describe.each(CASES)("$gateway", (item) => {
    it("accepts each route with its refs resolved", async () => {
      for (const object of item.routes) {
        const parents = await world.acceptedRoute(object.metadata.name as string);
        expect(parents.map((parent) => parent.conditions)).toEqual([
          expect.arrayContaining(["Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs"]),
        ]);
      }
    });

    it.each(item.reach)("passes %s through to %s", async (sni, backend) => {
      const dial = await world.dialUntil(sni, (outcome) => outcome.greeting !== undefined, item.gateway);
      expect(dial.greeting).toBe(`${backend} sni=${sni}`);
    });

    it(`rejects a connection for ${item.reject}, outside every intersection`, async () => {
      await world.dialUntil(item.reach[0][0], (outcome) => outcome.greeting !== undefined, item.gateway);
      expect(rejected(await world.dial(item.reject, item.gateway))).toBe(true);
    });
  });
});
