import { describe, expect, it } from "vitest";
import {
  PROTECTED_REQUEST_HEADERS,
  PROTECTED_RESPONSE_HEADERS,
} from "../../../functions/core/forwarding/filters.js";
import { compileModifier } from "../../../store/filters/header-modifier.js";
import { modifiedPath } from "../../../store/filters/path-modifier.js";
import { redirectLocation } from "../../../store/filters/request-redirect.js";
import type { PathModifier, Redirect, RouteMatch } from "../../../store/routes.js";

const prefix = (value: string): RouteMatch => ({ path: { type: "PathPrefix", value }, headers: [] });
const exact = (value: string): RouteMatch => ({ path: { type: "Exact", value }, headers: [] });
const replacePrefix = (value: string): PathModifier => ({ type: "ReplacePrefixMatch", value });

describe("URLRewrite and redirect paths", () => {
  // Gateway API HTTPPathModifier.ReplacePrefixMatch, the table in its documentation (an empty replacement
  // cannot be stored: a path starts with "/", which replaces the same way).
  it.each([
    ["/foo/bar", "/foo", "/xyz", "/xyz/bar"],
    ["/foo/bar", "/foo", "/xyz/", "/xyz/bar"],
    ["/foo/bar", "/foo/", "/xyz", "/xyz/bar"],
    ["/foo/bar", "/foo/", "/xyz/", "/xyz/bar"],
    ["/foo", "/foo", "/xyz", "/xyz"],
    ["/foo/", "/foo", "/xyz", "/xyz/"],
    ["/foo/bar", "/", "/", "/foo/bar"],
    ["/foo/", "/", "/", "/foo/"],
    ["/foo/bar", "/", "/xyz/", "/xyz/foo/bar"],
    ["/foo/", "/", "/xyz/", "/xyz/foo/"],
    ["/foo/bar", "/", "/xyz", "/xyz/foo/bar"],
    ["/foo", "/foo", "/", "/"],
    ["/foo/bar?x=1&y=/z", "/foo", "/xyz", "/xyz/bar?x=1&y=/z"],
  ])("ReplacePrefixMatch turns %s matched by %s with %s into %s", (path, matched, value, expected) => {
    expect(modifiedPath(path, prefix(matched), replacePrefix(value))).toBe(expected);
  });

  it.each([
    ["/anything/here?q=1", prefix("/anything"), "/fixed", "/fixed?q=1"],
    ["/one", exact("/one"), "/two/three", "/two/three"],
  ])("ReplaceFullPath turns %s into %s, keeping the query", (path, match, value, expected) => {
    expect(modifiedPath(path, match, { type: "ReplaceFullPath", value })).toBe(expected);
  });

  it("treats the whole path as the matched part of an Exact match", () => {
    expect(modifiedPath("/one", exact("/one"), replacePrefix("/two"))).toBe("/two");
  });
});

describe("RequestRedirect's Location", () => {
  const request = { proto: "http" as const, authority: "shop.test", host: "shop.test", path: "/cart?id=7" };
  it.each<[string, Partial<Redirect>, Partial<typeof request>, string]>([
    ["keeps everything unset", {}, {}, "http://shop.test/cart?id=7"],
    [
      "switches the scheme to https on its well-known port",
      { scheme: "https" },
      {},
      "https://shop.test/cart?id=7",
    ],
    [
      "drops the request's own port when the scheme changes",
      { scheme: "https" },
      { authority: "shop.test:8080" },
      "https://shop.test/cart?id=7",
    ],
    [
      "keeps the request's port otherwise",
      {},
      { authority: "shop.test:8080" },
      "http://shop.test:8080/cart?id=7",
    ],
    ["uses the redirect's port", { port: 8443, scheme: "https" }, {}, "https://shop.test:8443/cart?id=7"],
    [
      "leaves out a port that is the scheme's default",
      { port: 443, scheme: "https" },
      {},
      "https://shop.test/cart?id=7",
    ],
    ["replaces the hostname", { hostname: "www.shop.test" }, {}, "http://www.shop.test/cart?id=7"],
    [
      "replaces the full path, query kept",
      { path: { type: "ReplaceFullPath", value: "/basket" } },
      {},
      "http://shop.test/basket?id=7",
    ],
    [
      "replaces the matched prefix",
      { path: { type: "ReplacePrefixMatch", value: "/v2" } },
      { path: "/cart/items" },
      "http://shop.test/v2/items",
    ],
    [
      "keeps an IPv6 literal host",
      {},
      { authority: "[::1]:8080", host: "[::1]" },
      "http://[::1]:8080/cart?id=7",
    ],
  ])("%s", (_what, redirect, overrides, expected) => {
    const location = redirectLocation(
      { statusCode: 302, ...redirect },
      { ...request, ...overrides },
      prefix("/cart"),
    );
    expect(location).toBe(expected);
  });
});

describe("header modifiers", () => {
  const pair = (name: string, value: string) => ({ name, value });

  it("drops what is removed or set, then writes what is set and added, in the route's order", () => {
    const compiled = compileModifier(
      { set: [pair("x-env", "prod")], add: [pair("x-tag", "a"), pair("x-tag", "b")], remove: ["cookie"] },
      PROTECTED_REQUEST_HEADERS,
    );
    expect(compiled && [...compiled.drop]).toEqual(["cookie", "x-env"]);
    expect(compiled?.append).toEqual([
      ["x-env", "prod"],
      ["x-tag", "a"],
      ["x-tag", "b"],
    ]);
  });

  it.each([
    "host",
    "x-forwarded-for",
    "x-forwarded-proto",
    "x-forwarded-host",
    "forwarded",
    "x-request-id",
    "connection",
    "transfer-encoding",
    "content-length",
    "expect",
    "upgrade",
  ])("never lets a request modifier touch %s", (name) => {
    const compiled = compileModifier(
      { set: [pair(name, "x")], add: [pair(name, "y")], remove: [name] },
      PROTECTED_REQUEST_HEADERS,
    );
    expect(compiled).toBeUndefined();
  });

  it.each(["x-request-id", "content-length", "transfer-encoding", "connection"])(
    "never lets a response modifier touch %s",
    (name) => {
      expect(
        compileModifier({ set: [pair(name, "x")], add: [], remove: [name] }, PROTECTED_RESPONSE_HEADERS),
      ).toBeUndefined();
    },
  );
});
