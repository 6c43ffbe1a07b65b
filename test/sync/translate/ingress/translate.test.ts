import { describe, expect, it } from "vitest";
import { buildRouteTable, matchRoute } from "../../../../functions/core/routes/route-table.js";
import type { RouteRecord } from "../../../../store/routes.js";
import * as gateway from "../gateway/fixtures.js";
import { ingress, ingressClass, path, translate } from "./fixtures.js";

const shop = (spec: Record<string, unknown>, options?: Parameters<typeof ingress>[2]) =>
  ingress("shop", { ingressClassName: "edgeslice", ...spec }, options);

/** What a request reaches through the matcher: `service:port`, `500` for an invalid backend, or `404`. */
function reach(routes: readonly RouteRecord[], host: string, requestPath: string): string {
  const found = matchRoute(buildRouteTable(routes.map((route) => ({ route }))), host, {
    path: requestPath,
    method: "GET",
    headers: new Headers(),
  });
  const backend = found?.rule.backends[0];
  if (!found || !backend) return "404";
  return "service" in backend ? `${backend.service}:${backend.port}` : "500";
}

describe("Ingress rules → route records", () => {
  it("groups paths by host into one-label-wildcard records, host-less rules into a catch-all", () => {
    const result = translate({
      ingresses: [
        shop({
          rules: [
            { host: "shop.example.com", http: { paths: [path("/", "Prefix")] } },
            { host: "*.example.com", http: { paths: [path("/api", "Exact", "api", 8080)] } },
            { http: { paths: [path("/health", "Exact")] } },
            { host: "shop.example.com", http: { paths: [path("/api", "Prefix", "api", "http")] } },
          ],
        }),
      ],
    });
    expect(
      result.routes.map((route) => [route.id, route.hostnames, route.wildcard, route.rules.length]),
    ).toEqual([
      ["ingress:shop/shop#any-host", [], "one-label", 1],
      ["ingress:shop/shop#host:*.example.com", ["*.example.com"], "one-label", 1],
      ["ingress:shop/shop#host:shop.example.com", ["shop.example.com"], "one-label", 2],
    ]);
    expect(result.routes[2]?.rules[1]?.backends).toEqual([{ service: "shop/api", port: 8080, weight: 1 }]);
    expect(result.routes.every((route) => route.createdAt === Date.parse("2024-01-01T00:00:00Z"))).toBe(true);
    expect(result.problems).toEqual([]);
  });

  it.each([
    ["Prefix matches element-wise", "Prefix", "/foo/bar", "/foo/bar/baz", true],
    ["Prefix does not match a longer element", "Prefix", "/foo/bar", "/foo/barbaz", false],
    ["Prefix ignores a trailing slash", "Prefix", "/foo/", "/foo", true],
    ["Exact needs the whole path", "Exact", "/foo", "/foo/", false],
    ["ImplementationSpecific is a Prefix here", "ImplementationSpecific", "/foo", "/foo/x", true],
    [
      "ImplementationSpecific does not match a longer element",
      "ImplementationSpecific",
      "/foo",
      "/foox",
      false,
    ],
  ])("%s (%s %s vs %s)", (_case, pathType, value, requestPath, matches) => {
    const { routes } = translate({
      ingresses: [shop({ rules: [{ host: "a.example.com", http: { paths: [path(value, pathType)] } }] })],
    });
    expect(reach(routes, "a.example.com", requestPath)).toBe(matches ? "shop/web:80" : "404");
  });

  it("covers exactly one label with a wildcard host", () => {
    const { routes } = translate({
      ingresses: [shop({ rules: [{ host: "*.example.com", http: { paths: [path("/", "Prefix")] } }] })],
    });
    expect(reach(routes, "a.example.com", "/")).toBe("shop/web:80");
    expect(reach(routes, "a.b.example.com", "/")).toBe("404");
    expect(reach(routes, "example.com", "/")).toBe("404");
  });

  it("gives the longest matching path precedence, then Exact over Prefix", () => {
    const paths = [
      path("/", "Prefix", "web"),
      path("/api", "Prefix", "api", 8080),
      path("/api", "Exact", "api", 9090),
    ];
    const { routes } = translate({
      ingresses: [shop({ rules: [{ host: "a.example.com", http: { paths } }] })],
    });
    expect(reach(routes, "a.example.com", "/api")).toBe("shop/api:9090");
    expect(reach(routes, "a.example.com", "/api/x")).toBe("shop/api:8080");
    expect(reach(routes, "a.example.com", "/other")).toBe("shop/web:80");
  });

  it("serves the defaultBackend only when no rule of any route matches, whatever its age", () => {
    const legacy = ingress(
      "legacy",
      { ingressClassName: "edgeslice", defaultBackend: { service: { name: "web", port: { number: 80 } } } },
      { createdAt: "2000-01-01T00:00:00Z" },
    );
    const api = shop({
      rules: [
        { http: { paths: [path("/", "Prefix", "api", 8080)] } },
        { host: "a.example.com", http: { paths: [path("/x", "Exact", "api", 9090)] } },
      ],
    });
    const { routes } = translate({ ingresses: [legacy] });
    expect(routes[0]).toMatchObject({
      id: "ingress:shop/legacy#default-backend",
      fallback: true,
      hostnames: [],
    });
    expect(reach(routes, "anything.example", "/any")).toBe("shop/web:80");
    const both = translate({ ingresses: [legacy, api] }).routes;
    expect(reach(both, "b.example.com", "/any")).toBe("shop/api:8080");
  });

  it("lets a defaultBackend catch what an HTTPRoute's host does not serve", () => {
    const legacy = shop({ defaultBackend: { service: { name: "web", port: { name: "http" } } } });
    const api = gateway.httpRoute("api", {
      hostnames: ["a.example.com"],
      rules: [{ matches: [{ path: { value: "/api" } }], ...gateway.toService("infra-backend-v1") }],
    });
    const routes = [
      ...gateway.translate({ httpRoutes: [api] }).routes,
      ...translate({ ingresses: [legacy] }).routes,
    ];
    expect(reach(routes, "a.example.com", "/api/x")).toBe("infra/infra-backend-v1:8080");
    expect(reach(routes, "a.example.com", "/other")).toBe("shop/web:80");
  });
});

describe("backends and problems", () => {
  it("publishes a Service this cluster does not have, port by number, as a backend and reports it", () => {
    const backend = { service: { name: "gone", port: { number: 80 } } };
    const result = translate({
      ingresses: [shop({ rules: [{ http: { paths: [{ path: "/", pathType: "Prefix", backend }] } }] })],
    });
    expect(result.routes[0]?.rules[0]?.backends).toEqual([{ service: "shop/gone", port: 80, weight: 1 }]);
    expect(reach(result.routes, "h", "/")).toBe("shop/gone:80");
    expect(result.problems).toEqual([
      { object: "Ingress shop/shop", reason: "any host /: BackendNotFound: Service shop/gone not found" },
    ]);
  });

  it.each([
    [
      "a Service that does not exist, port by name (only the Service maps a name to a number)",
      { service: { name: "gone", port: { name: "http" } } },
      /^BackendNotFound: Service shop\/gone not found \(port named http\)/,
    ],
    [
      "a port name the Service does not have",
      { service: { name: "web", port: { name: "grpc" } } },
      /^BackendNotFound: Service shop\/web has no port named grpc/,
    ],
    [
      "a port number the Service does not have",
      { service: { name: "web", port: { number: 81 } } },
      /^BackendNotFound: Service shop\/web has no port 81/,
    ],
    [
      "a resource backend",
      { resource: { apiGroup: "k8s.example.com", kind: "StorageBucket", name: "b" } },
      /^InvalidKind: /,
    ],
  ])("keeps %s as an invalid backend (answered 500) and reports it", (_case, backend, message) => {
    const result = translate({
      ingresses: [shop({ rules: [{ http: { paths: [{ path: "/", pathType: "Prefix", backend }] } }] })],
    });
    expect(result.routes[0]?.rules[0]?.backends).toEqual([
      { invalid: expect.stringMatching(message), weight: 1 },
    ]);
    expect(reach(result.routes, "h", "/")).toBe("500");
    expect(result.problems).toHaveLength(1);
  });

  it.each([
    ["an unknown pathType", path("/", "Regex"), "pathType Regex is not supported"],
    [
      "a path in another controller's regex dialect",
      path("/api/(v1|v2)", "ImplementationSpecific"),
      "characters not allowed",
    ],
  ])("leaves out %s and reports it", (_case, bad, message) => {
    const result = translate({
      ingresses: [shop({ rules: [{ host: "a.example.com", http: { paths: [bad, path("/ok", "Exact")] } }] })],
    });
    expect(result.routes[0]?.rules.map((rule) => rule.matches[0]?.path.value)).toEqual(["/ok"]);
    expect(result.problems[0]?.reason).toContain(message);
  });

  it("treats an empty ImplementationSpecific path as /", () => {
    const { routes } = translate({
      ingresses: [shop({ rules: [{ http: { paths: [path(undefined, "ImplementationSpecific")] } }] })],
    });
    expect(routes[0]?.rules[0]?.matches).toEqual([{ path: { type: "PathPrefix", value: "/" }, headers: [] }]);
  });

  it("reports an Ingress with nothing to route", () => {
    const result = translate({ ingresses: [shop({ rules: [{ host: "a.example.com" }] })] });
    expect(result.routes).toEqual([]);
    expect(result.problems).toEqual([
      { object: "Ingress shop/shop", reason: "no rule with paths and no defaultBackend: nothing to route" },
    ]);
  });
});

describe("status and determinism", () => {
  const mine = shop({ rules: [{ http: { paths: [path("/", "Prefix")] } }] });
  const theirs = ingress("theirs", { ingressClassName: "nginx" });

  it("lists our Ingresses only, with an empty loadBalancer unless one is configured", () => {
    const classes = [ingressClass(), ingressClass("nginx", "k8s.io/ingress-nginx")];
    const plain = translate({ ingressClasses: classes, ingresses: [mine, theirs] });
    expect([...plain.statuses.ingresses.entries()]).toEqual([["shop/shop", { loadBalancer: {} }]]);
    const configured = translate({ ingresses: [mine], loadBalancer: [{ hostname: "edge.example.net" }] });
    expect(configured.statuses.ingresses.get("shop/shop")).toEqual({
      loadBalancer: { ingress: [{ hostname: "edge.example.net" }] },
    });
  });

  it("gives the same output whatever the input order, and reads a Date creationTimestamp", () => {
    const other = ingress(
      "a-first",
      {
        ingressClassName: "edgeslice",
        rules: [{ host: "b.example.com", http: { paths: [path("/", "Prefix")] } }],
      },
      { createdAt: new Date("2024-05-06T00:00:00Z") },
    );
    const forward = translate({ ingresses: [mine, other] });
    expect(translate({ ingresses: [other, mine] })).toEqual(forward);
    expect(forward.routes.map((route) => route.id)).toEqual([
      "ingress:shop/a-first#host:b.example.com",
      "ingress:shop/shop#any-host",
    ]);
    expect(forward.routes[0]?.createdAt).toBe(Date.parse("2024-05-06T00:00:00Z"));
  });
});
