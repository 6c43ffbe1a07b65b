import { describe, expect, it } from "vitest";
import { httpRoute, parentConditions, toService, translate } from "./fixtures.js";

/**
 * Filter values go into the heads the router writes (the request target, Host and fields sent upstream, a
 * redirect's Location, the response's fields): one the wire cannot carry would fail every request of the rule
 * at the router, so the rule is dropped here and the route's status says why. Objects read from a folder meet
 * no CRD validation, and the CRD does not check all of these.
 */
const good = { matches: [{ path: { type: "PathPrefix", value: "/ok" } }], ...toService("infra-backend-v1") };
const backends = toService("infra-backend-v1");

const rewritePath = (type: string, value: string) => ({
  filters: [
    {
      type: "URLRewrite",
      urlRewrite: {
        path:
          type === "ReplaceFullPath" ? { type, replaceFullPath: value } : { type, replacePrefixMatch: value },
      },
    },
  ],
  ...backends,
});
const redirect = (requestRedirect: Record<string, unknown>) => ({
  filters: [{ type: "RequestRedirect", requestRedirect }],
});
const headerFilter = (type: "RequestHeaderModifier" | "ResponseHeaderModifier", modifier: unknown) => ({
  filters: [
    type === "RequestHeaderModifier"
      ? { type, requestHeaderModifier: modifier }
      : { type, responseHeaderModifier: modifier },
  ],
  ...backends,
});

describe("filter values the wire cannot carry", () => {
  it.each<[string, Record<string, unknown>, string]>([
    ["a rewrite path with CR LF", rewritePath("ReplaceFullPath", "/a\r\nx-injected: 1"), "replaceFullPath"],
    ["a rewrite path with a space", rewritePath("ReplaceFullPath", "/a b"), "replaceFullPath"],
    ["a rewrite prefix with a tab", rewritePath("ReplacePrefixMatch", "/a\tb"), "replacePrefixMatch"],
    ["a rewrite path past ASCII", rewritePath("ReplaceFullPath", "/café"), "replaceFullPath"],
    ["a rewrite path with a query", rewritePath("ReplaceFullPath", "/a?b"), "replaceFullPath"],
    [
      "a redirect path with CR LF",
      redirect({ path: { type: "ReplaceFullPath", replaceFullPath: "/a\r\nLocation: http://evil" } }),
      "replaceFullPath",
    ],
    ["a redirect to a wildcard host", redirect({ hostname: "*.evil.test" }), "hostname"],
    ["a redirect to a host with CR LF", redirect({ hostname: "a.test\r\nx: y" }), "hostname"],
    ["a redirect to port 0", redirect({ port: 0 }), "port 0"],
    ["a redirect to port 65536", redirect({ port: 65536 }), "port 65536"],
    ["a redirect to a fractional port", redirect({ port: 80.5 }), "port 80.5"],
    [
      "a rewrite to a host with a space",
      { filters: [{ type: "URLRewrite", urlRewrite: { hostname: "a b" } }], ...backends },
      "hostname",
    ],
    [
      "a request header value with CR LF",
      headerFilter("RequestHeaderModifier", { set: [{ name: "X-A", value: "1\r\nx-injected: 1" }] }),
      "value",
    ],
    [
      "a request header value past Latin-1",
      headerFilter("RequestHeaderModifier", { add: [{ name: "X-A", value: "✓" }] }),
      "value",
    ],
    [
      "a request header name with a space",
      headerFilter("RequestHeaderModifier", { add: [{ name: "X A", value: "1" }] }),
      "name",
    ],
    [
      "a removed header name with a colon",
      headerFilter("RequestHeaderModifier", { remove: ["x:a"] }),
      "name",
    ],
    [
      "a response header value with LF",
      headerFilter("ResponseHeaderModifier", { set: [{ name: "X-A", value: "1\nx-injected: 1" }] }),
      "value",
    ],
    [
      "an empty response header name",
      headerFilter("ResponseHeaderModifier", { set: [{ name: "", value: "1" }] }),
      "name",
    ],
  ])("drops a rule with %s and says why in PartiallyInvalid", (_case, bad, message) => {
    const result = translate({ httpRoutes: [httpRoute("web", { rules: [bad, good] })] });
    expect(result.routes[0]?.rules.map((rule) => rule.matches[0]?.path.value)).toEqual(["/ok"]);
    expect(parentConditions(result, "infra/web")).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
      "PartiallyInvalid=True/UnsupportedValue",
    ]);
    const partially = result.statuses.httpRoutes.get("infra/web")?.[0]?.conditions[2]?.message ?? "";
    expect(partially).toContain(message);
    // The value is quoted as JSON: no raw CR or LF reaches the status or a log line.
    expect(partially).not.toMatch(/[\r\n]/);
  });
});
