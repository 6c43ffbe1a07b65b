import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app/app.js";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import { silentLogger } from "../../../lib/logger.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { snapshotOf } from "../fixtures.js";
import { testConfig } from "../harness.js";

/** `/_edgeslice/routes` and `/_edgeslice/explain` over version 2 routes published by two clusters. */
const web = (cluster: string, ip: string) =>
  serviceRecordV2({ cluster, service: "shop/web", ports: [{ number: 80, ipv4: [endpoint(ip, 8080)] }] });
const canary = serviceRecordV2({
  cluster: "east",
  service: "shop/canary",
  ports: [{ number: 80, ipv4: [endpoint("127.0.0.9", 8080)] }],
});
const front = routeRecord("httproute:shop/front", {
  hostnames: ["shop.test"],
  rules: [
    routeRule(
      [
        { service: "shop/web", port: 80, weight: 90 },
        { service: "shop/canary", port: 80, weight: 10 },
      ],
      { matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [], method: "GET" }] },
    ),
    routeRule([{ invalid: "BackendNotFound: shop/gone", weight: 1 }], {
      matches: [{ path: { type: "PathPrefix", value: "/gone" }, headers: [] }],
    }),
    routeRule([], {
      matches: [{ path: { type: "Exact", value: "/old" }, headers: [{ name: "x-old", value: "yes" }] }],
      filters: { redirect: { statusCode: 301, path: { type: "ReplaceFullPath", value: "/new" } } },
    }),
  ],
});
const twin = routeRecord("httproute:shop/twin", {
  hostnames: ["shop.test"],
  createdAt: 5_000,
  rules: [routeRule([{ service: "shop/web", port: 80, weight: 1 }])],
});
/** Asks for exactly what twin asks for, and is younger: never served on shop.test. */
const late = { ...twin, id: "httproute:shop/late", createdAt: 9_000 };
const drifted = routeRecord("httproute:shop/drift", { hostnames: ["a.test"], rules: [routeRule([])] });

const app = createApp({
  source: {
    current: () =>
      snapshotOf([
        { name: "east", services: [web("east", "127.0.0.1"), canary], routes: [front, twin, late, drifted] },
        {
          name: "west",
          services: [web("west", "127.0.1.1")],
          routes: [front, { ...drifted, hostnames: ["b.test"] }],
        },
      ]),
  },
  upstream: createFetchUpstream(fetch),
  config: testConfig,
  now: Date.now,
  random: Math.random,
  balancing: "p2c",
  logger: silentLogger,
});

async function admin(path: string): Promise<Record<string, unknown>> {
  const res = await app.request(`http://router/_edgeslice/${path}`, {
    headers: { authorization: "Bearer secret-token" },
  });
  return (await res.json()) as Record<string, unknown>;
}

describe("the admin view of version 2 routes", () => {
  it("lists each route with its clusters, rules, matches, filters, backend weights and endpoints, and the conflicts", async () => {
    const body = (await admin("routes")) as {
      routes: { id: string; clusters: unknown; rules: { backends: unknown[] }[] }[];
      conflicts: unknown;
    };
    expect(body.routes.map((route) => route.id)).toEqual([
      "httproute:shop/drift",
      "httproute:shop/front",
      "httproute:shop/late",
      "httproute:shop/twin",
    ]);
    const listed = body.routes[1];
    expect(listed?.clusters).toEqual([
      { cluster: "east", stale: false, serving: true },
      { cluster: "west", stale: false, serving: true },
    ]);
    expect(listed?.rules[0]?.backends).toEqual([
      {
        service: "shop/web",
        port: 80,
        weight: 90,
        share: 0.9,
        clusters: [
          {
            cluster: "east",
            stale: false,
            ipv4: { endpoints: 1, fallback: false },
            ipv6: { endpoints: 0, fallback: false },
          },
          {
            cluster: "west",
            stale: false,
            ipv4: { endpoints: 1, fallback: false },
            ipv6: { endpoints: 0, fallback: false },
          },
        ],
      },
      {
        service: "shop/canary",
        port: 80,
        weight: 10,
        share: 0.1,
        clusters: [
          {
            cluster: "east",
            stale: false,
            ipv4: { endpoints: 1, fallback: false },
            ipv6: { endpoints: 0, fallback: false },
          },
        ],
      },
    ]);
    expect(listed?.rules[1]?.backends).toEqual([
      { invalid: "BackendNotFound: shop/gone", weight: 1, share: 1 },
    ]);
    expect(body.conflicts).toEqual([{ id: "httproute:shop/drift", served: ["east"], shadowed: ["west"] }]);
  });

  it("explains a request: route, rule, match, weights, the heaviest backend's selection, and who it shadows", async () => {
    const body = await admin("explain?host=shop.test&path=/cart&method=GET");
    expect(body).toMatchObject({
      result: "proxy",
      rule: 0,
      match: { path: { type: "PathPrefix", value: "/" }, method: "GET" },
      backends: [
        { index: 0, service: "shop/web", weight: 90, share: 0.9 },
        { index: 1, service: "shop/canary", weight: 10, share: 0.1 },
      ],
      chosen: 0,
      upstream: { path: "/cart" },
      droppedStale: [],
      shadowed: [],
    });
    expect((body.tiers as { backends: { address: string }[] }[])[0]?.backends.map((b) => b.address)).toEqual([
      "127.0.0.1:8080",
      "127.0.1.1:8080",
    ]);
    const post = await admin("explain?host=shop.test&path=/cart&method=POST");
    expect(post).toMatchObject({ result: "proxy", route: { id: "httproute:shop/twin" } });
  });

  it("explains headers given as header=name:value, a redirect and an invalid backend", async () => {
    expect(await admin("explain?host=shop.test&path=/old&header=X-Old:%20yes")).toMatchObject({
      result: "redirect",
      rule: 2,
      redirect: { status: 301, location: "http://shop.test/new" },
    });
    expect(await admin("explain?host=shop.test&path=/old")).toMatchObject({ result: "proxy", rule: 0 });
    expect(await admin("explain?host=shop.test&path=/gone&method=PUT")).toMatchObject({
      result: "invalid_backend",
      why: ["500: BackendNotFound: shop/gone"],
    });
  });

  it("names the routes an identical match shadows", async () => {
    const body = await admin("explain?host=shop.test&path=/x&method=HEAD");
    expect(body).toMatchObject({
      route: { id: "httproute:shop/twin" },
      shadowed: [{ route: "httproute:shop/late", clusters: ["east"] }],
    });
    const winner = await admin("explain?host=a.test&path=/");
    expect(winner).toMatchObject({ route: { id: "httproute:shop/drift" }, result: "invalid_backend" });
  });

  it("exports the number of conflicting routes as a gauge", async () => {
    const res = await app.request("http://router/_edgeslice/metrics", {
      headers: { authorization: "Bearer secret-token" },
    });
    expect(await res.text()).toMatch(/^edgeslice_route_conflicts 1$/m);
  });
});
