import { describe, expect, it } from "vitest";
import { isAdminPath, requestTarget } from "../../../functions/core/http/request-target.js";

describe("requestTarget", () => {
  it.each([
    ["http://app.example/a?b=1", { proto: "http", authority: "app.example", path: "/a?b=1" }],
    ["https://app.example:8443", { proto: "https", authority: "app.example:8443", path: "/" }],
    ["http://app.example/a#frag", { proto: "http", authority: "app.example", path: "/a" }],
    ["http://app.example/a/../b", { proto: "http", authority: "app.example", path: "/b" }],
    ["http://app.example/%2e%2e/x", { proto: "http", authority: "app.example", path: "/x" }],
    ["http://a@b.example/x", { proto: "http", authority: "b.example", path: "/x" }],
    ["http://[::1]:9000/x?q", { proto: "http", authority: "[::1]:9000", path: "/x?q" }],
    ["ftp://app.example/", undefined],
    ["http:///x", undefined],
  ])("splits %s into %j", (url, expected) => {
    expect(requestTarget(url)).toEqual(expected);
  });
});

describe("isAdminPath (the reserved prefix as Hono matches it)", () => {
  it.each([
    ["/_edgeslice", true],
    ["/_edgeslice/metrics", true],
    ["/_edgeslice?x=1", true],
    ["/%5Fedgeslice/healthz", true],
    ["/_edgeslicex", false],
    ["/_edgeslice%2Fx", false],
    ["/api/_edgeslice", false],
    ["/%E0%A4%A", false],
  ])("%s is reserved: %s", (path, expected) => {
    expect(isAdminPath(path)).toBe(expected);
  });
});
