import { describe, expect, it } from "vitest";
import { createRouting, type Routing } from "../../../functions/core/routing.js";
import { silentLogger } from "../../../lib/logger.js";
import type { Snapshot } from "../../../store/store.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { capturingLogger } from "../../support/loggers.js";
import { type ClusterFixture, ep, serviceRecord, snapshotOf } from "../fixtures.js";
import { testConfig } from "../harness.js";

function routingOver(snapshot: Snapshot, random = () => 0.5, logger = silentLogger): Routing {
  return createRouting({
    source: { current: () => snapshot },
    config: testConfig,
    now: Date.now,
    random,
    balancing: "p2c",
    logger,
  });
}

const web = (cluster: string, ip: string) =>
  serviceRecordV2({ cluster, service: "shop/web", ports: [{ number: 80, ipv4: [endpoint(ip, 8080)] }] });
const webRoute = routeRecord("httproute:shop/web", {
  hostnames: ["shop.test"],
  rules: [routeRule([{ service: "shop/web", port: 80, weight: 1 }])],
});

/** Where a GET goes: the backend addresses of its selection, or what the router answers instead. */
async function routed(routing: Routing, url: string, headers: Record<string, string> = {}, method = "GET") {
  const result = await routing.route(url, { method, headers: new Headers(headers) });
  if (typeof result === "string") return result;
  if ("redirect" in result) return result.redirect;
  if ("preflight" in result) throw new Error("a CORS preflight answer: no CORS filter here");
  if ("error" in result) return result.error;
  return { addresses: result.selection.addresses, path: result.upstreamPath, host: result.upstreamHost };
}

describe("routes across clusters", () => {
  it("merges the endpoints of a route two clusters publish alike", async () => {
    const routing = routingOver(
      snapshotOf([
        { name: "east", services: [web("east", "10.0.0.1")], routes: [webRoute] },
        { name: "west", services: [web("west", "10.1.0.1")], routes: [structuredClone(webRoute)] },
      ]),
    );
    expect(await routed(routing, "http://shop.test/")).toMatchObject({
      addresses: ["10.0.0.1:8080", "10.1.0.1:8080"],
    });
  });

  it("serves the definition most clusters publish, reports the other copies once, and takes no endpoints from them", async () => {
    const { logger, lines } = capturingLogger();
    const drifted = { ...webRoute, hostnames: ["shop.test", "old.shop.test"] };
    const clusters: ClusterFixture[] = [
      { name: "east", services: [web("east", "10.0.0.1")], routes: [webRoute] },
      { name: "north", services: [web("north", "10.2.0.1")], routes: [webRoute] },
      { name: "west", services: [web("west", "10.1.0.1")], routes: [drifted] },
    ];
    const first = snapshotOf(clusters, 1);
    const routing = routingOver(first, () => 0.5, logger);
    expect(await routed(routing, "http://shop.test/")).toMatchObject({
      addresses: ["10.0.0.1:8080", "10.2.0.1:8080"],
    });
    expect(await routed(routing, "http://old.shop.test/")).toBe("no_route");
    expect(routing.routesOf(first).conflicts).toEqual([
      { id: "httproute:shop/web", served: ["east", "north"], shadowed: ["west"] },
    ]);
    routing.routesOf(snapshotOf(clusters, 2));
    expect(lines.filter((line) => String(line.msg).includes("different definitions"))).toHaveLength(1);
  });

  it("serves a version 1 cluster next to a version 2 one, merging the annotation route both publish", async () => {
    const legacy = serviceRecord({
      cluster: "old",
      service: "shop/web",
      hosts: ["shop.test"],
      ipv4: [ep("10.0.0.1")],
    });
    // The upgraded sync writes the same annotation route with the Service's creation time.
    const upgraded = {
      ...routeRecord("annotation:shop/web", { hostnames: ["shop.test"], rules: [] }),
      wildcard: "one-label" as const,
    };
    const annotation = {
      ...upgraded,
      source: "annotation" as const,
      createdAt: 1_700_000_000_000,
      rules: [routeRule([{ service: "shop/web", port: 80, weight: 1 }])],
    };
    const api = routeRecord("httproute:shop/api", {
      hostnames: ["api.test"],
      rules: [routeRule([{ service: "shop/api", port: 9090, weight: 1 }])],
    });
    const apiService = serviceRecordV2({
      cluster: "new",
      service: "shop/api",
      ports: [{ number: 9090, ipv4: [endpoint("10.1.0.9", 9000)] }],
    });
    const snapshot = snapshotOf([
      { name: "old", records: [legacy] },
      { name: "new", services: [web("new", "10.1.0.1"), apiService], routes: [annotation, api] },
    ]);
    const routing = routingOver(snapshot);
    expect(await routed(routing, "http://shop.test/")).toMatchObject({
      addresses: ["10.1.0.1:8080", "10.0.0.1:8080"],
    });
    expect(await routed(routing, "http://api.test/")).toMatchObject({ addresses: ["10.1.0.9:9000"] });
    expect(routing.routesOf(snapshot).conflicts).toEqual([]);
  });

  it("keeps serving a route whose only clusters went stale while other clusters are fresh (fail static per route)", async () => {
    const routing = routingOver(
      snapshotOf([
        { name: "east", stale: true, services: [web("east", "10.0.0.1")], routes: [webRoute] },
        { name: "west", records: [serviceRecord({ cluster: "west", ipv4: [ep("10.1.0.1")] })] },
      ]),
    );
    expect(await routed(routing, "http://shop.test/")).toMatchObject({ addresses: ["10.0.0.1:8080"] });
  });
});

describe("what a rule does with a request", () => {
  const service = serviceRecordV2({
    cluster: "east",
    service: "shop/web",
    ports: [{ number: 80, ipv4: [endpoint("10.0.0.1", 8080)] }],
  });
  const canary = serviceRecordV2({
    cluster: "east",
    service: "shop/canary",
    ports: [{ number: 80, ipv4: [endpoint("10.0.0.2", 8080)] }],
  });
  const to = (name: string, weight = 1) => ({ service: `shop/${name}`, port: 80, weight });
  const route = routeRecord("httproute:shop/rules", {
    hostnames: ["shop.test"],
    rules: [
      routeRule([to("canary")], {
        matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [{ name: "x-canary", value: "1" }] }],
      }),
      routeRule([to("canary")], {
        matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [], method: "POST" }],
      }),
      routeRule([to("web")], {
        matches: [{ path: { type: "Exact", value: "/old" }, headers: [] }],
        filters: { redirect: { statusCode: 301, path: { type: "ReplaceFullPath", value: "/new" } } },
      }),
      routeRule([to("web")], {
        matches: [{ path: { type: "PathPrefix", value: "/api" }, headers: [] }],
        filters: {
          rewrite: { hostname: "internal.shop", path: { type: "ReplacePrefixMatch", value: "/v2" } },
        },
      }),
      routeRule([{ invalid: "BackendNotFound: shop/gone", weight: 1 }, to("web", 9)], {
        matches: [{ path: { type: "PathPrefix", value: "/split" }, headers: [] }],
      }),
      routeRule([to("missing")], {
        matches: [{ path: { type: "PathPrefix", value: "/missing" }, headers: [] }],
      }),
      routeRule([to("web")]),
    ],
  });
  const snapshot = snapshotOf([{ name: "east", services: [service, canary], routes: [route] }]);

  it.each<[string, string, Record<string, string>, string, number, unknown]>([
    [
      "a header match wins over a bare prefix",
      "/x",
      { "x-canary": "1" },
      "GET",
      0.5,
      { addresses: ["10.0.0.2:8080"] },
    ],
    ["a method match", "/x", {}, "POST", 0.5, { addresses: ["10.0.0.2:8080"] }],
    ["neither: the catch-all rule", "/x", {}, "GET", 0.5, { addresses: ["10.0.0.1:8080"], path: "/x" }],
    [
      "a redirect, answered by the router",
      "/old?a=1",
      {},
      "GET",
      0.5,
      { status: 301, location: "http://shop.test/new?a=1" },
    ],
    [
      "an Exact path does not match a longer one",
      "/old/x",
      {},
      "GET",
      0.5,
      { addresses: ["10.0.0.1:8080"], path: "/old/x" },
    ],
    [
      "a rewrite of path and host",
      "/api/items?q",
      {},
      "GET",
      0.5,
      { path: "/v2/items?q", host: "internal.shop" },
    ],
    ["the invalid backend's share", "/split", {}, "GET", 0.05, "invalid_backend"],
    ["the valid backend's share", "/split", {}, "GET", 0.5, { addresses: ["10.0.0.1:8080"] }],
    ["a backend no cluster has a record of", "/missing", {}, "GET", 0.5, "invalid_backend"],
  ])("%s", async (_what, path, headers, method, draw, expected) => {
    const routing = routingOver(snapshot, () => draw);
    expect(await routed(routing, `http://shop.test${path}`, headers, method)).toMatchObject(
      expected as object,
    );
  });
});
