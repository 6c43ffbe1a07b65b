import { describe, expect, it } from "vitest";
import { httpRoute, parentConditions, toService, translate } from "./fixtures.js";

const one = (rule: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  translate({ httpRoutes: [httpRoute("web", { rules: [rule], ...extra })] });

describe("matches", () => {
  it("applies the CRD defaults: no rules means one rule matching everything, weight 1", () => {
    const result = translate({ httpRoutes: [httpRoute("web", {})] });
    expect(result.routes[0]?.rules).toEqual([
      { matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }], filters: {}, backends: [] },
    ]);
    expect(one(toService("infra-backend-v1")).routes[0]?.rules[0]?.backends).toEqual([
      { service: "infra/infra-backend-v1", port: 8080, weight: 1 },
    ]);
  });

  it("translates path, headers and method; drops a PathPrefix's trailing slash; lower-cases header names", () => {
    const result = one({
      matches: [
        { path: { type: "Exact", value: "/one/" }, method: "POST" },
        { path: { type: "PathPrefix", value: "/two/" }, headers: [{ name: "X-Version", value: "Two" }] },
        {
          headers: [
            { type: "Exact", name: "A", value: "1" },
            { name: "a", value: "2" },
          ],
        },
      ],
      ...toService("infra-backend-v1"),
    });
    expect(result.routes[0]?.rules[0]?.matches).toEqual([
      { path: { type: "Exact", value: "/one/" }, headers: [], method: "POST" },
      { path: { type: "PathPrefix", value: "/two" }, headers: [{ name: "x-version", value: "Two" }] },
      // HTTPHeaderMatch.name: only the first entry with an equivalent name counts.
      { path: { type: "PathPrefix", value: "/" }, headers: [{ name: "a", value: "1" }] },
    ]);
  });
});

describe("filters", () => {
  it("translates header modifiers, with names lower-cased", () => {
    const modifier = {
      set: [{ name: "X-Set", value: "1" }],
      add: [{ name: "X-Add", value: "2" }],
      remove: ["X-Gone"],
    };
    const result = one({
      filters: [
        { type: "RequestHeaderModifier", requestHeaderModifier: modifier },
        { type: "ResponseHeaderModifier", responseHeaderModifier: { remove: ["Server"] } },
      ],
      ...toService("infra-backend-v1"),
    });
    expect(result.routes[0]?.rules[0]?.filters).toEqual({
      requestHeaders: {
        set: [{ name: "x-set", value: "1" }],
        add: [{ name: "x-add", value: "2" }],
        remove: ["x-gone"],
      },
      responseHeaders: { set: [], add: [], remove: ["server"] },
    });
  });

  it.each([
    [
      "a redirect with the default status code 302",
      { type: "RequestRedirect", requestRedirect: { scheme: "https" } },
      { redirect: { statusCode: 302, scheme: "https" } },
    ],
    [
      "a redirect replacing the matched prefix",
      {
        type: "RequestRedirect",
        requestRedirect: {
          hostname: "Example.org",
          port: 8443,
          statusCode: 301,
          path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/new" },
        },
      },
      {
        redirect: {
          statusCode: 301,
          hostname: "example.org",
          port: 8443,
          path: { type: "ReplacePrefixMatch", value: "/new" },
        },
      },
    ],
    [
      "a rewrite of the full path and host",
      {
        type: "URLRewrite",
        urlRewrite: {
          hostname: "internal.example",
          path: { type: "ReplaceFullPath", replaceFullPath: "/x" },
        },
      },
      { rewrite: { hostname: "internal.example", path: { type: "ReplaceFullPath", value: "/x" } } },
    ],
    [
      "a rewrite dropping the matched prefix (an empty replacement is stored as /)",
      { type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "" } } },
      { rewrite: { path: { type: "ReplacePrefixMatch", value: "/" } } },
    ],
  ])("translates %s", (_case, filter, expected) => {
    const backends = filter.type === "RequestRedirect" ? {} : toService("infra-backend-v1");
    const result = one({
      matches: [{ path: { type: "PathPrefix", value: "/old" } }],
      filters: [filter],
      ...backends,
    });
    expect(result.routes[0]?.rules[0]?.filters).toEqual(expected);
  });
});

describe("rules the router cannot carry out are dropped, not served differently", () => {
  const good = {
    matches: [{ path: { type: "PathPrefix", value: "/ok" } }],
    ...toService("infra-backend-v1"),
  };
  it.each([
    [
      "a RegularExpression path",
      { matches: [{ path: { type: "RegularExpression", value: "/a.*" } }] },
      "path match type RegularExpression",
    ],
    [
      "a RegularExpression header",
      { matches: [{ headers: [{ type: "RegularExpression", name: "a", value: ".*" }] }] },
      "header match type RegularExpression",
    ],
    [
      "a RegularExpression query parameter match",
      { matches: [{ queryParams: [{ type: "RegularExpression", name: "a", value: "1.*" }] }] },
      "query parameter match type RegularExpression",
    ],
    ["a method outside the enum", { matches: [{ method: "PURGE" }] }, "method PURGE"],
    ["a path with a dot-dot segment", { matches: [{ path: { value: "/a/../b" } }] }, "segment"],
    [
      "an ExtensionRef filter",
      { filters: [{ type: "ExtensionRef", extensionRef: { group: "x.io", kind: "F", name: "f" } }] },
      "filter ExtensionRef",
    ],
    ["a filter type this version does not know", { filters: [{ type: "Teleport" }] }, "filter Teleport"],
    [
      "a redirect on a backendRef",
      {
        backendRefs: [
          {
            name: "infra-backend-v1",
            port: 8080,
            filters: [{ type: "RequestRedirect", requestRedirect: { hostname: "elsewhere.test" } }],
          },
        ],
      },
      "RequestRedirect",
    ],
    [
      "a redirect scheme this version does not know",
      { filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "ftp" } }] },
      "scheme ftp",
    ],
    [
      "ReplacePrefixMatch next to an Exact match",
      {
        matches: [{ path: { type: "Exact", value: "/a" } }],
        filters: [
          {
            type: "URLRewrite",
            urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/b" } },
          },
        ],
      },
      "ReplacePrefixMatch",
    ],
  ])("drops a rule with %s: PartiallyInvalid while another rule serves", (_case, bad, message) => {
    const result = translate({ httpRoutes: [httpRoute("web", { rules: [bad, good] })] });
    expect(result.routes[0]?.rules.map((rule) => rule.matches[0]?.path.value)).toEqual(["/ok"]);
    expect(parentConditions(result, "infra/web")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
      "PartiallyInvalid=True/UnsupportedValue",
    ]);
    const partially = result.statuses.httpRoutes.get("infra/web")?.[0]?.conditions[2];
    expect(partially?.message).toMatch(/^Dropped Rule rule 0 \(/);
    expect(partially?.message).toContain(message);
    expect(result.problems.map((problem) => problem.object)).toEqual(["HTTPRoute infra/web"]);
  });

  it.each([
    [
      "RequestRedirect with backendRefs",
      { filters: [{ type: "RequestRedirect", requestRedirect: {} }], ...toService("infra-backend-v1") },
    ],
    [
      "RequestRedirect with URLRewrite",
      {
        filters: [
          { type: "RequestRedirect", requestRedirect: {} },
          { type: "URLRewrite", urlRewrite: {} },
        ],
      },
    ],
  ])("refuses %s as IncompatibleFilters", (_case, bad) => {
    const result = translate({ httpRoutes: [httpRoute("web", { rules: [bad, good] })] });
    expect(result.statuses.httpRoutes.get("infra/web")?.[0]?.conditions[2]?.message).toContain(
      "together with",
    );
  });

  it("does not accept a route none of whose rules can be served (UnsupportedValue), and publishes nothing", () => {
    const result = one({ matches: [{ path: { type: "RegularExpression", value: "/a.*" } }] });
    expect(result.routes).toEqual([]);
    expect(parentConditions(result, "infra/web")).toEqual([
      "Accepted=False/UnsupportedValue",
      "ResolvedRefs=True/ResolvedRefs",
    ]);
  });

  it("serves a rule with timeouts, applied, and reports no problem", () => {
    const result = one({ ...toService("infra-backend-v1"), timeouts: { request: "10s" } });
    expect(result.routes[0]?.rules[0]?.timeouts).toEqual({ requestMs: 10_000 });
    expect(result.problems).toEqual([]);
  });
});

describe("filters on a backendRef", () => {
  it("carries a backendRef's header modifiers into its backend", () => {
    const result = translate({
      httpRoutes: [
        httpRoute("web", {
          rules: [
            {
              backendRefs: [
                {
                  name: "infra-backend-v1",
                  port: 8080,
                  filters: [
                    {
                      type: "RequestHeaderModifier",
                      requestHeaderModifier: { set: [{ name: "Backend", value: "v1" }] },
                    },
                  ],
                },
              ],
            },
          ],
        }),
      ],
    });
    expect(result.routes[0]?.rules[0]?.backends[0]).toEqual({
      service: "infra/infra-backend-v1",
      port: 8080,
      weight: 1,
      filters: { requestHeaders: { set: [{ name: "backend", value: "v1" }], add: [], remove: [] } },
    });
  });
});

describe("RequestMirror", () => {
  const mirror = (requestMirror: Record<string, unknown>) => ({
    ...toService("infra-backend-v1"),
    filters: [{ type: "RequestMirror", requestMirror }],
  });

  it.each([
    ["every request by default", { backendRef: { name: "infra-backend-v2", port: 8080 } }, 100],
    ["a percent", { backendRef: { name: "infra-backend-v2", port: 8080 }, percent: 20 }, 20],
    [
      "a fraction",
      { backendRef: { name: "infra-backend-v2", port: 8080 }, fraction: { numerator: 1, denominator: 4 } },
      25,
    ],
  ])("carries the mirror with %s", (_case, requestMirror, percent) => {
    const result = one(mirror(requestMirror));
    expect(result.routes[0]?.rules[0]?.filters.mirrors).toEqual([
      { service: "infra/infra-backend-v2", port: 8080, percent },
    ]);
  });

  it("reports a mirror whose Service does not exist (BackendNotFound) and serves the rule without it", () => {
    const result = one(mirror({ backendRef: { name: "missing", port: 8080 } }));
    expect(result.routes[0]?.rules[0]?.filters.mirrors).toBeUndefined();
    expect(parentConditions(result, "infra/web")).toContain("ResolvedRefs=False/BackendNotFound");
  });
});
