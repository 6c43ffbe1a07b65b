import { describe, expect, it } from "vitest";
import { compareRanks, rankOf } from "../../../functions/core/routes/precedence.js";
import { exact, prefix, request, route, rule, served } from "./route-match-fixtures.js";

/**
 * Precedence across routes and rules, as the Gateway API writes it in HTTPRouteRule.matches and
 * HTTPRoute.hostnames (gateway.networking.k8s.io/v1, v1.6.1 standard CRD descriptions); the request
 * tables of the cases named after a conformance test are taken from that test.
 */

describe("conformance HTTPRouteMatching: one route, path and header matches", () => {
  const routes = [
    route("httproute:infra/matching", {
      rules: [
        rule("infra-backend-v1", prefix("/"), prefix("/", { headers: { version: "one" } })),
        rule("infra-backend-v2", prefix("/v2"), prefix("/", { headers: { version: "two" } })),
      ],
    }),
  ];
  it.each([
    ["/", {}, "infra-backend-v1"],
    ["/example", {}, "infra-backend-v1"],
    ["/", { Version: "one" }, "infra-backend-v1"],
    ["/v2", {}, "infra-backend-v2"],
    ["/v2/example", {}, "infra-backend-v2"],
    ["/", { Version: "two" }, "infra-backend-v2"],
  ])("sends %s with headers %j to %s", (path, headers, backend) => {
    expect(served(routes, "example.com", request(path, { headers }))).toBe(backend);
  });
});

describe("conformance HTTPRouteMatchingAcrossRoutes: the same precedence across two routes", () => {
  const routes = [
    route("httproute:infra/matching-part1", {
      hostnames: ["example.com", "example.net"],
      createdAt: 1,
      rules: [rule("infra-backend-v1", prefix("/"), prefix("/", { headers: { version: "one" } }))],
    }),
    route("httproute:infra/matching-part2", {
      hostnames: ["example.com"],
      createdAt: 2,
      rules: [rule("infra-backend-v2", prefix("/v2"), prefix("/", { headers: { version: "two" } }))],
    }),
  ];
  it.each([
    ["example.com", "/", {}, "infra-backend-v1"],
    ["example.com", "/example", {}, "infra-backend-v1"],
    ["example.net", "/example", {}, "infra-backend-v1"],
    ["example.com", "/example", { Version: "one" }, "infra-backend-v1"],
    ["example.com", "/v2", {}, "infra-backend-v2"],
    ["example.net", "/v2", {}, "infra-backend-v1"],
    ["example.com", "/v2/example", {}, "infra-backend-v2"],
    ["example.com", "/", { Version: "two" }, "infra-backend-v2"],
  ])("sends %s%s with headers %j to %s", (host, path, headers, backend) => {
    expect(served(routes, host, request(path, { headers }))).toBe(backend);
  });
});

describe("conformance HTTPRouteMethodMatching", () => {
  const routes = [
    route("httproute:infra/method-matching", {
      rules: [
        rule("infra-backend-v1", prefix("/", { method: "POST" })),
        rule("infra-backend-v2", prefix("/", { method: "GET" })),
      ],
    }),
  ];
  it.each([
    ["POST", "infra-backend-v1"],
    ["GET", "infra-backend-v2"],
    ["HEAD", "404"],
  ])("sends %s to %s", (method, backend) => {
    expect(served(routes, "h", request("/", { method }))).toBe(backend);
  });
});

describe("conformance HTTPRouteExactPathMatching", () => {
  const routes = [
    route("httproute:infra/exact-matching", {
      rules: [rule("infra-backend-v1", exact("/one")), rule("infra-backend-v2", exact("/two"))],
    }),
  ];
  it.each([
    ["/one", "infra-backend-v1"],
    ["/two", "infra-backend-v2"],
    ["/", "404"],
    ["/one/example", "404"],
    ["/two/", "404"],
  ])("sends %s to %s", (path, backend) => {
    expect(served(routes, "h", request(path))).toBe(backend);
  });
});

describe("precedence between matches, criterion by criterion", () => {
  const at = (createdAt: number, id: string, ...rules: ReturnType<typeof rule>[]) =>
    route(id, { createdAt, rules });
  it.each([
    [
      "an Exact path wins over a longer-valued PathPrefix that also matches",
      [
        at(2, "httproute:a/x", rule("exact", exact("/a/b"))),
        at(1, "httproute:a/y", rule("prefix", prefix("/a/b"))),
      ],
      request("/a/b"),
      "exact",
    ],
    [
      "the longest PathPrefix wins, whatever the age",
      [
        at(1, "httproute:a/x", rule("short", prefix("/a"))),
        at(2, "httproute:a/y", rule("long", prefix("/a/b"))),
      ],
      request("/a/b/c"),
      "long",
    ],
    [
      "a prefix's trailing slash does not lengthen it",
      [
        at(1, "httproute:a/x", rule("bare", prefix("/a"))),
        at(2, "httproute:a/y", rule("slash", prefix("/a/"))),
      ],
      request("/a/b"),
      "bare",
    ],
    [
      "a method match wins over more headers",
      [
        at(1, "httproute:a/x", rule("headers", prefix("/", { headers: { a: "1", b: "2" } }))),
        at(2, "httproute:a/y", rule("method", prefix("/", { method: "GET" }))),
      ],
      request("/", { headers: { a: "1", b: "2" } }),
      "method",
    ],
    [
      "more header matches win",
      [
        at(1, "httproute:a/x", rule("one", prefix("/", { headers: { a: "1" } }))),
        at(2, "httproute:a/y", rule("two", prefix("/", { headers: { a: "1", b: "2" } }))),
      ],
      request("/", { headers: { a: "1", b: "2" } }),
      "two",
    ],
    [
      "the oldest route wins a tie",
      [at(2, "httproute:a/x", rule("newer")), at(1, "httproute:z/z", rule("older"))],
      request("/"),
      "older",
    ],
    [
      "namespace/name order breaks a tie of age",
      [at(1, "httproute:b/a", rule("b-a")), at(1, "httproute:a/z", rule("a-z"))],
      request("/"),
      "a-z",
    ],
    [
      "the first rule of a route wins a tie within it",
      [at(1, "httproute:a/x", rule("first", prefix("/p")), rule("second", prefix("/p")))],
      request("/p"),
      "first",
    ],
  ])("%s", (_case, routes, facts, backend) => {
    expect(served(routes, "h", facts)).toBe(backend);
    expect(served([...routes].reverse(), "h", facts)).toBe(backend);
  });

  it("tries a fallback route after every other route of its bucket, even a newer one", () => {
    const fallback = route("ingress:a/legacy#default-backend", {
      createdAt: 1,
      fallback: true,
      wildcard: "one-label",
      rules: [rule("default")],
    });
    const newer = route("httproute:a/new", { createdAt: 9, rules: [rule("new")] });
    expect(served([fallback, newer], "h", request("/"))).toBe("new");
    expect(
      served(
        [fallback, route("httproute:a/api", { rules: [rule("api", prefix("/api"))] })],
        "h",
        request("/x"),
      ),
    ).toBe("default");
  });

  it("orders ranks totally: a rank ties only with itself", () => {
    const record = route("httproute:a/x", { rules: [rule("a", prefix("/p"), prefix("/p"))] });
    expect(compareRanks(rankOf(record, 0, 0), rankOf(record, 0, 0))).toBe(0);
    expect(compareRanks(rankOf(record, 0, 0), rankOf(record, 0, 1))).toBeLessThan(0);
  });
});

describe("precedence between hostnames (HTTPRoute.hostnames)", () => {
  const routes = [
    route("httproute:a/catch-all", { createdAt: 1, rules: [rule("catch-all", exact("/x"))] }),
    route("httproute:a/short", { createdAt: 2, hostnames: ["*.example.com"], rules: [rule("short")] }),
    route("httproute:a/long", { createdAt: 3, hostnames: ["*.b.example.com"], rules: [rule("long")] }),
    route("httproute:a/exact", {
      createdAt: 4,
      hostnames: ["a.b.example.com"],
      rules: [rule("exact", prefix("/only"))],
    }),
  ];
  it.each([
    ["an exact hostname wins over every wildcard", "a.b.example.com", "/only", "exact"],
    ["a longer wildcard wins over a shorter one on the same match", "a.b.example.com", "/y", "long"],
    ["a longer wildcard covers deeper hosts", "z.a.b.example.com", "/", "long"],
    ["the shorter wildcard serves what the longer does not cover", "c.example.com", "/y", "short"],
    // The rules of every route serving a host are ranked together (official HTTPRouteMatchingAcrossRoutes).
    [
      "an Exact path of a catch-all route wins over a wildcard route's prefix",
      "c.example.com",
      "/x",
      "catch-all",
    ],
    [
      "an Exact path of a catch-all route wins over an exact hostname's prefix",
      "a.b.example.com",
      "/x",
      "catch-all",
    ],
    ["the catch-all serves other hosts", "other.net", "/x", "catch-all"],
  ])("%s (%s%s → %s)", (_case, host, path, backend) => {
    expect(served(routes, host, request(path))).toBe(backend);
  });
});
