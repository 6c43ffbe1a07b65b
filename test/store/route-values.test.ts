import { describe, expect, it } from "vitest";
import { createWarnOnce } from "../../lib/warn-once.js";
import type { RouteFilters, RouteRecord } from "../../store/routes.js";
import { decodeClusterRecords } from "../../store/stored-records.js";
import { capturingLogger } from "../support/loggers.js";

/**
 * Filter values a router would put on the wire (URLRewrite and RequestRedirect paths and hosts, header
 * modifier names and values) must be valid there: a record from an older or hostile sync that holds one
 * which is not is skipped at decoding, logged once, and every other route keeps serving.
 */
const PREFIX_ROOT = { path: { type: "PathPrefix", value: "/" }, headers: [] };

function routeWith(id: string, filters: unknown, backends = true, match: unknown = PREFIX_ROOT): unknown {
  return {
    v: 2,
    id,
    source: "httproute",
    createdAt: 1_000,
    hostnames: ["shop.test"],
    wildcard: "suffix",
    rules: [
      {
        matches: [match],
        filters,
        backends: backends ? [{ service: "shop/web", port: 80, weight: 1 }] : [],
      },
    ],
  };
}

const good: RouteFilters = { rewrite: { path: { type: "ReplaceFullPath", value: "/ok" } } };

/** Decodes a cluster holding a route with `filters` and a good one `times` times with one WarnOnce, as refreshes do. */
function decodedWith(filters: unknown, times: number, match: unknown = PREFIX_ROOT) {
  const redirects = typeof filters === "object" && filters !== null && "redirect" in filters;
  const { logger, lines } = capturingLogger();
  const warnings = createWarnOnce(logger);
  let routes: ReadonlyMap<string, RouteRecord> = new Map();
  for (let i = 0; i < times; i++) {
    routes = decodeClusterRecords(
      "east",
      [],
      [
        [
          "httproute:shop/tested",
          JSON.stringify(routeWith("httproute:shop/tested", filters, !redirects, match)),
        ],
        ["httproute:shop/good", JSON.stringify(routeWith("httproute:shop/good", good))],
      ],
      warnings,
    ).routes;
  }
  return { ids: [...routes.keys()], lines };
}

const fullPath = (value: string) => ({ rewrite: { path: { type: "ReplaceFullPath", value } } });
const prefixPath = (value: string) => ({ rewrite: { path: { type: "ReplacePrefixMatch", value } } });
const redirectPath = (value: string) => ({
  redirect: { statusCode: 302, path: { type: "ReplaceFullPath", value } },
});
const requestHeader = (name: string, value: string) => ({
  requestHeaders: { set: [{ name, value }], add: [], remove: [] },
});
const responseHeader = (name: string, value: string) => ({
  responseHeaders: { set: [], add: [{ name, value }], remove: [] },
});

describe("route records whose filter values cannot go on the wire", () => {
  it.each<[string, unknown]>([
    ["a rewrite path with CR LF", fullPath("/a\r\nx-injected: 1")],
    ["a rewrite path with a bare LF", fullPath("/a\nb")],
    ["a rewrite path with a space", fullPath("/a b")],
    ["a rewrite path with a tab", prefixPath("/a\tb")],
    ["a rewrite path with a NUL", prefixPath("/a\u0000")],
    ["a rewrite path with a character past ASCII", fullPath("/café")],
    ["a rewrite path with a query", fullPath("/a?b=1")],
    ["a rewrite path with a fragment", fullPath("/a#b")],
    ["a rewrite path with a broken percent-encoding", fullPath("/a%zz")],
    ["a redirect path with CR LF", redirectPath("/a\r\nLocation: http://evil")],
    ["a redirect path with a space", redirectPath("/ a")],
    ["a redirect to a wildcard host", { redirect: { statusCode: 302, hostname: "*.evil.test" } }],
    ["a redirect to a host with CR LF", { redirect: { statusCode: 302, hostname: "a.test\r\nx: y" } }],
    ["a redirect to port 0", { redirect: { statusCode: 302, port: 0 } }],
    ["a rewrite to a wildcard host", { rewrite: { hostname: "*.internal.test" } }],
    ["a rewrite to a host with a space", { rewrite: { hostname: "a b.test" } }],
    ["a request header value with CR LF", requestHeader("x-a", "1\r\nx-injected: 1")],
    ["a request header value with a NUL", requestHeader("x-a", "1\u0000")],
    ["a request header value past Latin-1", requestHeader("x-a", "✓")],
    ["a request header name with a space", requestHeader("x a", "1")],
    ["a request header name with a colon", requestHeader("x:a", "1")],
    ["an empty request header name", requestHeader("", "1")],
    ["a response header value with LF", responseHeader("x-a", "1\nx-injected: 1")],
    ["a response header name with CR", responseHeader("x-a\r", "1")],
  ])("skips a route with %s, logs it once and serves the rest", (_case, filters) => {
    const { ids, lines } = decodedWith(filters, 3);
    expect(ids).toEqual(["httproute:shop/good"]);
    expect(lines.map((line) => [line.msg, line.route])).toEqual([
      ["skipping invalid route record", "httproute:shop/tested"],
    ]);
  });

  it.each<[string, unknown]>([
    ["percent-encoded characters", fullPath("/caf%C3%A9/a%20b")],
    ["every other path character RFC 3986 allows", fullPath("/a-b_c.d~e!f$g&h'i(j)k*l+m,n;o=p:q@r")],
    ["the root", prefixPath("/")],
    ["obs-text and tabs in a header value", requestHeader("x-a", "a\tb \u00e9")],
    [
      "a redirect to a host, scheme and port",
      { redirect: { statusCode: 301, hostname: "b.test", scheme: "https", port: 8443 } },
    ],
  ])("serves a route with %s", (_case, filters) => {
    const { ids, lines } = decodedWith(filters, 1);
    expect(ids).toEqual(["httproute:shop/tested", "httproute:shop/good"]);
    expect(lines).toEqual([]);
  });
});

/**
 * A condition or filter this router does not know is never ignored: ignoring a match condition would widen
 * what the rule matches, and a filter "MUST NOT be skipped" (Gateway API HTTPRouteFilter).
 */
describe("route records with a match condition or a filter this router does not know", () => {
  it.each<[string, unknown, unknown]>([
    [
      "a RegularExpression query parameter match",
      {},
      { ...PREFIX_ROOT, queryParams: [{ type: "RegularExpression", name: "debug", value: "1.*" }] },
    ],
    [
      "a RegularExpression header match",
      {},
      { ...PREFIX_ROOT, headers: [{ type: "RegularExpression", name: "x-a", value: ".*" }] },
    ],
    [
      "a path match with a field of its own",
      {},
      { path: { type: "PathPrefix", value: "/", flags: "i" }, headers: [] },
    ],
    ["a RequestMirror filter", { mirror: { service: "shop/web", port: 80 } }, PREFIX_ROOT],
  ])("skips a route with %s, logs it once and serves the rest", (_case, filters, match) => {
    const { ids, lines } = decodedWith(filters, 3, match);
    expect(ids).toEqual(["httproute:shop/good"]);
    expect(lines.map((line) => [line.msg, line.route])).toEqual([
      ["skipping invalid route record", "httproute:shop/tested"],
    ]);
  });
});
