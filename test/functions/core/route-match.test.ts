import { describe, expect, it } from "vitest";
import { hasPathPrefix, headersMatch, pathMatches } from "../../../functions/core/routes/request-match.js";
import { buildRouteTable, matchRoute, ruleKey } from "../../../functions/core/routes/route-table.js";
import { normalisePathPrefix, pathOf } from "../../../store/paths.js";
import { exact, prefix, request, route, rule, served } from "./route-match-fixtures.js";

describe("path matching", () => {
  it.each([
    ["a PathPrefix matches itself", prefix("/abc"), "/abc", true],
    ["a PathPrefix matches its path with a trailing slash", prefix("/abc"), "/abc/", true],
    ["a PathPrefix matches a deeper path", prefix("/abc"), "/abc/def", true],
    ["a PathPrefix does not match a longer element", prefix("/abc"), "/abcd", false],
    ["a PathPrefix with a trailing slash matches the bare path", prefix("/abc/"), "/abc", true],
    ["a PathPrefix with a trailing slash does not match a longer element", prefix("/abc/"), "/abcd", false],
    ["the root prefix matches every path", prefix("/"), "/anything/at/all", true],
    ["PathPrefix is case-sensitive", prefix("/abc"), "/ABC", false],
    ["an Exact path matches itself", exact("/one"), "/one", true],
    ["an Exact path does not match its path with a trailing slash", exact("/one"), "/one/", false],
    ["an Exact path does not match a deeper path", exact("/one"), "/one/example", false],
    ["an Exact path with a trailing slash needs it", exact("/one/"), "/one", false],
  ])("%s (%j vs %s → %s)", (_case, match, path, expected) => {
    expect(pathMatches(match.path, path)).toBe(expected);
  });

  it.each([
    ["/abc/", "/abc"],
    ["/abc///", "/abc"],
    ["/", "/"],
    ["//", "/"],
    ["/abc", "/abc"],
  ])("normalises the prefix %s to %s", (raw, expected) => {
    expect(normalisePathPrefix(raw)).toBe(expected);
  });

  it("ignores the query when matching a path", () => {
    expect(pathOf("/one?x=/two")).toBe("/one");
    expect(
      served([route("httproute:shop/a", { rules: [rule("a", exact("/one"))] })], "h", request("/one?q=1")),
    ).toBe("a");
  });

  it("matches prefixes on element boundaries only", () => {
    expect(hasPathPrefix("/api/v1", "/api")).toBe(true);
    expect(hasPathPrefix("/apiv1", "/api")).toBe(false);
  });
});

describe("header and method matching", () => {
  it("compares header names case-insensitively and values exactly", () => {
    const wanted = [{ name: "version", value: "two" }];
    expect(headersMatch(wanted, new Headers({ Version: "two" }))).toBe(true);
    expect(headersMatch(wanted, new Headers({ VERSION: "Two" }))).toBe(false);
    expect(headersMatch(wanted, new Headers({}))).toBe(false);
  });

  it("needs every header of a match (they are ANDed)", () => {
    const routes = [
      route("httproute:shop/a", { rules: [rule("a", prefix("/", { headers: { a: "1", b: "2" } }))] }),
    ];
    expect(served(routes, "h", request("/", { headers: { a: "1", b: "2" } }))).toBe("a");
    expect(served(routes, "h", request("/", { headers: { a: "1" } }))).toBe("404");
  });

  it("matches any one of a rule's matches (they are ORed)", () => {
    const routes = [route("httproute:shop/a", { rules: [rule("a", exact("/x"), prefix("/y"))] })];
    expect(served(routes, "h", request("/x"))).toBe("a");
    expect(served(routes, "h", request("/y/z"))).toBe("a");
    expect(served(routes, "h", request("/z"))).toBe("404");
  });

  it("compares the method case-sensitively", () => {
    const routes = [route("httproute:shop/a", { rules: [rule("a", prefix("/", { method: "POST" }))] })];
    expect(served(routes, "h", request("/", { method: "POST" }))).toBe("a");
    expect(served(routes, "h", request("/", { method: "post" }))).toBe("404");
    expect(served(routes, "h", request("/", { method: "GET" }))).toBe("404");
  });
});

describe("host lookup", () => {
  const routes = [
    route("httproute:shop/exact", { hostnames: ["app.example.com"], rules: [rule("exact")] }),
    route("httproute:shop/suffix", { hostnames: ["*.example.com"], rules: [rule("suffix")] }),
    route("ingress:shop/one#host:*.example.org", {
      hostnames: ["*.example.org"],
      wildcard: "one-label",
      rules: [rule("one-label")],
    }),
  ];

  it.each([
    ["an exact host", "app.example.com", "exact"],
    ["a host one label under a suffix wildcard", "web.example.com", "suffix"],
    ["a host several labels under a suffix wildcard", "a.b.example.com", "suffix"],
    ["the wildcard's own domain", "example.com", "404"],
    ["a host one label under a one-label wildcard", "web.example.org", "one-label"],
    ["a host two labels under a one-label wildcard", "a.web.example.org", "404"],
    ["an unknown host", "example.net", "404"],
    ["an IPv6 literal", "[::1]", "404"],
  ])("serves %s (%s → %s)", (_case, host, expected) => {
    expect(served(routes, host, request("/"))).toBe(expected);
  });

  it("serves every host from a route without hostnames", () => {
    const catchAll = [route("httproute:shop/all", { rules: [rule("all")] })];
    expect(served(catchAll, "anything.example", request("/"))).toBe("all");
    expect(served(catchAll, "[::1]", request("/"))).toBe("all");
  });

  it("falls through from a host's routes to wider patterns when none of its matches accept the request", () => {
    const layered = [
      route("httproute:shop/exact", {
        hostnames: ["app.example.com"],
        rules: [rule("exact", prefix("/api"))],
      }),
      route("httproute:shop/suffix", {
        hostnames: ["*.example.com"],
        rules: [rule("suffix", prefix("/web"))],
      }),
      route("httproute:shop/all", { rules: [rule("all")] }),
    ];
    expect(served(layered, "app.example.com", request("/api/x"))).toBe("exact");
    expect(served(layered, "app.example.com", request("/web"))).toBe("suffix");
    expect(served(layered, "app.example.com", request("/other"))).toBe("all");
  });
});

describe("match result", () => {
  it("names the rule by a key that holds no cluster, and the host pattern that matched", () => {
    const record = route("httproute:shop/web", {
      hostnames: ["*.example.com"],
      rules: [rule("a", exact("/a")), rule("b", prefix("/b"), prefix("/bb"))],
    });
    const table = buildRouteTable([{ route: record, clusters: [{ name: "east" }] }]);
    const found = matchRoute(table, "x.example.com", request("/bb/1"));
    expect(found).toMatchObject({
      ruleIndex: 1,
      matchIndex: 1,
      ruleKey: ruleKey("httproute:shop/web", 1),
      hostname: "*.example.com",
      entry: { clusters: [{ name: "east" }] },
    });
    expect(found?.ruleKey).toBe("httproute:shop/web[1]");
  });

  it("keeps the first entry of an id given twice and reports it", () => {
    const first = route("httproute:shop/web", { rules: [rule("first")] });
    const second = route("httproute:shop/web", { rules: [rule("second")] });
    const table = buildRouteTable([{ route: first }, { route: second }]);
    expect(table.duplicates).toEqual(["httproute:shop/web"]);
    expect(matchRoute(table, "h", request("/"))?.route).toBe(first);
  });
});
