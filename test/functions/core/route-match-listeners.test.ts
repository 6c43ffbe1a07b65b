import { describe, expect, it } from "vitest";
import { buildRouteTable, matchRoute } from "../../../functions/core/routes/route-table.js";
import type { RouteListener, RouteRecord } from "../../../store/routes.js";
import { request, route, rule } from "./route-match-fixtures.js";

/** A route whose single rule sends everything to `backend`, attached through `listeners`. */
function attached(name: string, backend: string, listeners: RouteListener[], hostnames: string[] = []) {
  return { ...route(`httproute:infra/${name}`, { hostnames, rules: [rule(backend)] }), listeners };
}

function servedBy(routes: RouteRecord[], host: string, port: number | undefined, gateways?: string[]) {
  const table = buildRouteTable(
    routes.map((record) => ({ route: record })),
    gateways ? new Set(gateways) : undefined,
  );
  const found = matchRoute(table, host, { ...request("/"), port });
  const backend = found?.rule.backends[0];
  return backend && "service" in backend ? backend.service.split("/")[1] : "404";
}

const listener = (gateway: string, port: number, hostnames: string[] = []): RouteListener => ({
  gateway,
  port,
  hostnames,
});

describe("routes kept apart by Gateway and listener port", () => {
  const twoGateways = [
    attached("same-namespace-only", "v2", [listener("infra/same-namespace", 80)]),
    attached("all-namespaces-only", "v3", [listener("infra/all-namespaces", 80)]),
  ];
  const threePorts = [
    attached("on-80", "v1", [listener("infra/ports", 80)]),
    attached("on-8080", "v2", [listener("infra/ports", 8080)], ["*.example.com"]),
    attached("on-8090", "v3", [listener("infra/ports", 8090)], ["*.example.com"]),
  ];

  it.each([
    [
      "a router of one Gateway serves its routes only",
      twoGateways,
      "a.test",
      undefined,
      ["infra/same-namespace"],
      "v2",
    ],
    [
      "a router of the other Gateway serves its own",
      twoGateways,
      "a.test",
      undefined,
      ["infra/all-namespaces"],
      "v3",
    ],
    [
      "a router of neither Gateway serves neither",
      twoGateways,
      "a.test",
      undefined,
      ["infra/elsewhere"],
      "404",
    ],
    ["the Host's port picks the listener on 8080", threePorts, "foo.example.com", 8080, undefined, "v2"],
    ["the Host's port picks the listener on 8090", threePorts, "foo.example.com", 8090, undefined, "v3"],
    [
      "a Host without a port is the default port 80",
      threePorts,
      "foo.example.com",
      undefined,
      undefined,
      "v1",
    ],
    ["an explicit :80 is port 80", threePorts, "foo.example.com", 80, undefined, "v1"],
    [
      "a port no listener uses counts as the default (the router's own port)",
      threePorts,
      "foo.example.com",
      18080,
      undefined,
      "v1",
    ],
  ])("%s", (_case, routes, host, port, gateways, expected) => {
    expect(servedBy(routes, host, port, gateways)).toBe(expected);
  });

  it("answers 404 on a listener port the route is not attached through", () => {
    const only8080 = [
      attached("on-8080", "v2", [listener("infra/ports", 8080)]),
      attached("on-8090", "v3", [listener("infra/ports", 8090)]),
    ];
    expect(servedBy(only8080, "a.test", undefined)).toBe("404");
    expect(servedBy(only8080, "a.test", 8090)).toBe("v3");
  });

  it("serves a hostname only on the listeners it came through", () => {
    const split = [
      attached(
        "split",
        "v1",
        [listener("infra/gw", 80, ["a.example.com"]), listener("infra/gw", 8080, ["b.example.com"])],
        ["a.example.com", "b.example.com"],
      ),
    ];
    expect(servedBy(split, "a.example.com", 80)).toBe("v1");
    expect(servedBy(split, "a.example.com", 8080)).toBe("404");
    expect(servedBy(split, "b.example.com", 8080)).toBe("v1");
  });

  it("serves a route without listeners (annotation, Ingress, an older sync) on every port and Gateway", () => {
    const legacy = [route("ingress:infra/site", { rules: [rule("v1")] })];
    const ports = [attached("on-8090", "v3", [listener("infra/ports", 8090)])];
    expect(servedBy([...legacy, ...ports], "a.test", 8090, ["infra/other"])).toBe("v1");
    expect(servedBy([...legacy, ...ports], "a.test", undefined, ["infra/other"])).toBe("v1");
  });

  it("serves a request only through the listener whose hostname matches it most specifically", () => {
    const isolated = (name: string, listenerHostname: string | undefined, hostnames: string[]) => ({
      ...route(`httproute:infra/${name}`, {
        hostnames,
        rules: [rule(name, { path: { type: "PathPrefix", value: `/${name}` }, headers: [] })],
      }),
      listeners: [
        { gateway: "infra/gw", port: 80, hostnames, ...(listenerHostname ? { listenerHostname } : {}) },
      ],
    });
    const routes = [
      isolated("empty", undefined, []),
      isolated("wild", "*.example.com", ["*.example.com"]),
      isolated("abc", "abc.example.com", ["abc.example.com"]),
    ];
    const table = buildRouteTable(routes.map((record) => ({ route: record })));
    const served = (host: string, path: string) => {
      const backend = matchRoute(table, host, request(path))?.rule.backends[0];
      return backend && "service" in backend ? backend.service.split("/")[1] : "404";
    };
    expect(served("abc.example.com", "/abc")).toBe("abc");
    expect(served("abc.example.com", "/wild")).toBe("404");
    expect(served("abc.example.com", "/empty")).toBe("404");
    expect(served("x.example.com", "/wild")).toBe("wild");
    expect(served("x.example.com", "/empty")).toBe("404");
    expect(served("bar.com", "/empty")).toBe("empty");
  });

  it("chooses the listener of a TLS request by its SNI, then serves the Host from that listener's routes only", () => {
    const https = (name: string, listenerHostname: string | undefined, hostnames: string[]) => ({
      ...route(`httproute:infra/${name}`, { hostnames, rules: [rule(name)] }),
      listeners: [
        { gateway: "infra/gw", port: 443, hostnames, ...(listenerHostname ? { listenerHostname } : {}) },
      ],
    });
    const table = buildRouteTable(
      [
        https("any", undefined, ["example.org"]),
        https("second", "second-example.org", ["second-example.org"]),
      ].map((record) => ({ route: record })),
    );
    const served = (host: string, serverName: string | undefined) => {
      const backend = matchRoute(table, host, { ...request("/"), port: 443, serverName })?.rule.backends[0];
      return backend && "service" in backend ? backend.service.split("/")[1] : "404";
    };
    expect.soft(served("second-example.org", "second-example.org")).toBe("second");
    expect.soft(served("example.org", "example.org")).toBe("any");
    expect.soft(served("second-example.org", "unknown-example.org")).toBe("404");
    expect.soft(served("example.org", "second-example.org")).toBe("404");
    expect.soft(served("second-example.org", undefined)).toBe("second");
  });

  it.each([
    [
      "east's host through east's listener without hostname, whatever evil's listener names",
      "pay.test",
      "/",
      "pay",
    ],
    ["evil's own host through its own *.test listener", "evil.test", "/", "evil"],
    [
      "a route both clusters serve, isolated by the union of their listeners (east's exact one wins)",
      "both.test",
      "/",
      "404",
    ],
    ["a route both clusters serve, through east's exact listener", "both.test", "/exact", "exact"],
  ])("keeps each cluster's listeners to its own routes: %s", (_name, host, path, expected) => {
    const at = (name: string, hostnames: string[], listenerHostname: string | undefined, prefix = "/") => ({
      ...route(`httproute:infra/${name}`, {
        hostnames,
        rules: [rule(name, { path: { type: "PathPrefix", value: prefix }, headers: [] })],
      }),
      listeners: [
        { gateway: "infra/edge", port: 80, hostnames, ...(listenerHostname ? { listenerHostname } : {}) },
      ],
    });
    const cluster = (...names: string[]) => names.map((name) => ({ name }));
    const table = buildRouteTable([
      { route: at("pay", ["pay.test"], undefined), clusters: cluster("east") },
      { route: at("evil", ["evil.test"], "*.test"), clusters: cluster("evil") },
      { route: at("both", ["both.test"], undefined), clusters: cluster("east", "evil") },
      { route: at("exact", ["both.test"], "both.test", "/exact"), clusters: cluster("east") },
    ]);
    const backend = matchRoute(table, host, request(path))?.rule.backends[0];
    expect(backend && "service" in backend ? backend.service.split("/")[1] : "404").toBe(expected);
  });
});
