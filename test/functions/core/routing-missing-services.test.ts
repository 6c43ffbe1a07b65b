import { describe, expect, it } from "vitest";
import { explainRequest } from "../../../functions/app/admin-routes.js";
import { createRouting, type Routing } from "../../../functions/core/routing.js";
import { silentLogger } from "../../../lib/logger.js";
import type { ServiceRecordV2 } from "../../../store/services.js";
import type { Snapshot } from "../../../store/store.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { httpRoute, SERVICES, service, translate } from "../../sync/translate/gateway/fixtures.js";
import { snapshotOf } from "../fixtures.js";
import { testConfig } from "../harness.js";

function routingOver(snapshot: Snapshot, random: () => number): Routing {
  return createRouting({
    source: { current: () => snapshot },
    config: testConfig,
    now: Date.now,
    random,
    balancing: "p2c",
    logger: silentLogger,
  });
}

/** Where a GET with the weighted draw `draw` goes: the selection's addresses, or the router's answer. */
async function routed(snapshot: Snapshot, url: string, draw: number) {
  const result = await routingOver(snapshot, () => draw).route(url, {
    method: "GET",
    headers: new Headers(),
  });
  if (typeof result === "string") return result;
  if ("redirect" in result) return result.redirect;
  if ("preflight" in result) throw new Error("a CORS preflight answer: no CORS filter here");
  if ("error" in result) return result.error;
  return result.selection.addresses;
}

const serviceIn = (cluster: string, name: string, port: number, ips: string[]): ServiceRecordV2 =>
  serviceRecordV2({
    cluster,
    service: `infra/${name}`,
    ports: [{ number: port, ipv4: ips.map((ip) => endpoint(ip, 8080)) }],
  });

describe("a canary Service deployed to one cluster first", () => {
  // One HTTPRoute applied to both clusters: 90% to infra-backend-v1, 10% to the canary only east has.
  const canaryRoute = httpRoute("shop", {
    hostnames: ["shop.test"],
    rules: [
      {
        backendRefs: [
          { name: "infra-backend-v1", port: 8080, weight: 90 },
          { name: "canary", port: 8080, weight: 10 },
        ],
      },
    ],
  });
  const west = translate({ httpRoutes: [canaryRoute] });
  const east = translate({ httpRoutes: [canaryRoute], services: [...SERVICES, service("canary")] });
  const snapshot = snapshotOf([
    {
      name: "east",
      services: [
        serviceIn("east", "infra-backend-v1", 8080, ["10.0.0.1"]),
        serviceIn("east", "canary", 8080, ["10.0.0.9"]),
      ],
      routes: [...east.routes],
    },
    {
      name: "west",
      services: [serviceIn("west", "infra-backend-v1", 8080, ["10.1.0.1"])],
      routes: [...west.routes],
    },
  ]);

  it("merges the two clusters' copies of the route into one served from both", () => {
    const routes = routingOver(snapshot, () => 0.5).routesOf(snapshot);
    expect(routes.conflicts).toEqual([]);
    expect(routes.routes.map((item) => item.clusters.map((view) => view.name))).toEqual([["east", "west"]]);
  });

  it("sends the main share to both clusters' backends", async () => {
    expect(await routed(snapshot, "http://shop.test/", 0.5)).toEqual(["10.0.0.1:8080", "10.1.0.1:8080"]);
  });

  it("sends the canary share to east's canary", async () => {
    expect(await routed(snapshot, "http://shop.test/", 0.95)).toEqual(["10.0.0.9:8080"]);
  });
});

describe("a backendRef to a Service no cluster has", () => {
  const route = routeRecord("httproute:infra/shop", {
    hostnames: ["shop.test"],
    rules: [
      routeRule([
        { service: "infra/web", port: 8080, weight: 9 },
        { service: "infra/ghost", port: 8080, weight: 1 },
      ]),
      routeRule([{ service: "infra/drained", port: 8080, weight: 1 }], {
        matches: [{ path: { type: "PathPrefix", value: "/drained" }, headers: [] }],
      }),
      routeRule([{ service: "infra/web", port: 9999, weight: 1 }], {
        matches: [{ path: { type: "PathPrefix", value: "/other-port" }, headers: [] }],
      }),
    ],
  });
  const snapshot = snapshotOf([
    {
      name: "east",
      services: [serviceIn("east", "web", 8080, ["10.0.0.1"]), serviceIn("east", "drained", 8080, [])],
      routes: [route],
    },
    {
      name: "west",
      services: [serviceIn("west", "web", 8080, ["10.1.0.1"])],
      routes: [structuredClone(route)],
    },
  ]);

  it("answers its share as an invalid backend (500)", async () => {
    expect(await routed(snapshot, "http://shop.test/", 0.95)).toBe("invalid_backend");
  });

  it("sends the other share to the Service the clusters have", async () => {
    expect(await routed(snapshot, "http://shop.test/", 0.5)).toEqual(["10.0.0.1:8080", "10.1.0.1:8080"]);
  });

  it("answers a port no cluster's record of the Service lists as an invalid backend (500)", async () => {
    expect(await routed(snapshot, "http://shop.test/other-port", 0.5)).toBe("invalid_backend");
  });

  it("keeps answering a Service one cluster has without ready endpoints with no_endpoints (503)", async () => {
    expect(await routed(snapshot, "http://shop.test/drained", 0.5)).toBe("no_endpoints");
  });

  it("says in /explain which backend no cluster has, and that its share is answered 500", () => {
    const routing = routingOver(snapshot, () => 0.5);
    const explain = (path: string) =>
      explainRequest({
        routes: routing.routesOf(snapshot),
        rawHost: "shop.test",
        path,
        method: "GET",
        headers: new Headers(),
        select: routing.select,
        balancer: routing.policy.balancer,
        ejection: routing.policy.ejection,
      });
    expect(explain("/")).toMatchObject({
      result: "proxy",
      backends: [{ service: "infra/web" }, { service: "infra/ghost", unresolved: true, share: 0.1 }],
    });
    const first = explain("/");
    expect("backends" in first && first.backends[0]).not.toHaveProperty("unresolved");
    expect(explain("/other-port")).toMatchObject({
      result: "invalid_backend",
      why: [
        "500: Service infra/web port 9999 has no record in any cluster the route is served from (east, west): BackendNotFound",
      ],
    });
    expect(explain("/drained")).toMatchObject({ result: "no_endpoints" });
  });

  it("decides it once per snapshot: the same selection for every request", () => {
    const routing = routingOver(snapshot, () => 0.5);
    const served = routing.routesOf(snapshot).routes[0];
    if (!served) throw new Error("route not served");
    const first = routing.select(served, 0, 1);
    expect(first.unresolved).toBe(true);
    expect(routing.select(served, 0, 1)).toBe(first);
    expect(routing.select(served, 0, 0).unresolved).toBe(false);
  });
});
