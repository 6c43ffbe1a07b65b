import { describe, expect, it } from "vitest";
import { matchPassthrough } from "../../../functions/core/routes/passthrough.js";
import { buildRouteTable, matchRoute } from "../../../functions/core/routes/route-table.js";
import type { RouteListener, RouteRecord } from "../../../store/routes.js";

/** TLSRoute records as the sync writes them (sync/translate/gateway/tls-route.ts). */
function tlsRoute(name: string, hostnames: string[], listeners: RouteListener[], createdAt = 0): RouteRecord {
  return {
    v: 2,
    id: `tlsroute:infra/${name}`,
    source: "tlsroute",
    createdAt,
    hostnames,
    wildcard: "suffix",
    listeners,
    rules: [
      {
        matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }],
        filters: {},
        backends: [{ service: `infra/${name}`, port: 443, weight: 1 }],
      },
    ],
  };
}

const on = (
  gateway: string,
  port: number,
  listenerHostname?: string,
  hostnames: string[] = [],
): RouteListener => ({
  gateway,
  port,
  ...(listenerHostname ? { listenerHostname } : {}),
  hostnames,
});

const ROUTES: RouteRecord[] = [
  tlsRoute("exact", ["abc.example.com"], [on("infra/gw", 443, "*.example.com")]),
  tlsRoute("wild", ["*.example.com"], [on("infra/gw", 443, "*.example.com")]),
  tlsRoute("com", ["*.com"], [on("infra/other", 443)]),
  tlsRoute("mqtt", ["broker.example.org"], [on("infra/gw", 8883, "broker.example.org")]),
  tlsRoute("newer", ["db.example.net"], [on("infra/gw", 443)], 20),
  tlsRoute("older", ["db.example.net"], [on("infra/gw", 443)], 10),
  {
    ...tlsRoute("web", ["web.example.com"], [on("infra/gw", 443, "*.example.com")]),
    id: "httproute:infra/web",
    source: "httproute",
  },
];

const table = buildRouteTable(
  ROUTES.map((route) => ({ route })),
  undefined,
  "passthrough",
);
const name = (sni: string | undefined, port = 443) => matchPassthrough(table, sni, port)?.route.id;

describe("the TLSRoute a connection's server name reaches", () => {
  it.each<[string, string | undefined, number, string | undefined]>([
    ["an exact hostname before a wildcard", "abc.example.com", 443, "tlsroute:infra/exact"],
    ["a wildcard over one or more labels", "x.y.example.com", 443, "tlsroute:infra/wild"],
    ["the longest wildcard before a shorter one", "other.example.com", 443, "tlsroute:infra/wild"],
    ["a shorter wildcard where no longer one covers", "shop.test.com", 443, "tlsroute:infra/com"],
    ["the oldest of two routes of one name", "db.example.net", 443, "tlsroute:infra/older"],
    ["a route on its own listener port", "broker.example.org", 8883, "tlsroute:infra/mqtt"],
    ["nothing on another port", "broker.example.org", 443, undefined],
    ["nothing on a port no TLS listener uses", "abc.example.com", 9443, undefined],
    ["nothing without a server name", undefined, 443, undefined],
    ["nothing for a name no route claims", "example.org", 443, undefined],
    ["never an HTTPRoute, whatever its hostnames", "web.example.com", 443, "tlsroute:infra/wild"],
  ])("%s", (_case, sni, port, expected) => {
    expect(name(sni, port)).toBe(expected);
  });

  it("keeps listener isolation: a Gateway's more specific TLS listener takes the name from its catch-all", () => {
    const isolated = buildRouteTable(
      [
        tlsRoute("catch-all", [], [on("infra/gw", 443)]),
        tlsRoute("db", ["db.example.com"], [on("infra/gw", 443, "db.example.com", ["db.example.com"])]),
      ].map((route) => ({ route })),
      undefined,
      "passthrough",
    );
    expect(matchPassthrough(isolated, "db.example.com", 443)?.route.id).toBe("tlsroute:infra/db");
    expect(matchPassthrough(isolated, "anything.test", 443)?.route.id).toBe("tlsroute:infra/catch-all");
  });

  it("serves only the Gateways this router implements (GATEWAYS)", () => {
    const only = buildRouteTable(
      ROUTES.map((route) => ({ route })),
      new Set(["infra/other"]),
      "passthrough",
    );
    expect(matchPassthrough(only, "abc.example.com", 443)?.route.id).toBe("tlsroute:infra/com");
  });

  it("is never reached by an HTTP request: the HTTP table leaves TLSRoutes out", () => {
    const http = buildRouteTable(ROUTES.map((route) => ({ route })));
    const facts = { path: "/", method: "GET", headers: { get: () => null }, port: 443 };
    expect(matchRoute(http, "abc.example.com", facts)).toBeUndefined();
    expect(matchRoute(http, "web.example.com", facts)?.route.id).toBe("httproute:infra/web");
    expect([...http.entries.keys()]).toEqual(["httproute:infra/web"]);
  });
});
