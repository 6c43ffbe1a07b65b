import { describe, expect, it } from "vitest";
import {
  buildRouteIndex,
  lookupRoute,
  normaliseHost,
  pathHasPrefix,
  routeIndexOf,
} from "../../../functions/core/route-index.js";
import { ep, serviceRecord, snapshotOf } from "../fixtures.js";

describe("normaliseHost", () => {
  it.each([
    ["App.Example", "app.example"],
    ["app.example:8080", "app.example"],
    ["app.example.", "app.example"],
    ["app.example.:443", "app.example"],
    ["[::1]:8080", "[::1]"],
    ["[2001:DB8::1]", "[2001:db8::1]"],
    ["", undefined],
    ["[::1", undefined],
  ])("turns %j into %j", (input, expected) => {
    expect(normaliseHost(input)).toBe(expected);
  });
});

describe("pathHasPrefix", () => {
  it.each([
    ["/api", "/api", true],
    ["/api/x", "/api", true],
    ["/api?q=1", "/api", true],
    ["/apix", "/api", false],
    ["/ap", "/api", false],
    ["/anything", "/", true],
  ])("%s under %s is %s", (path, prefix, expected) => {
    expect(pathHasPrefix(path, prefix)).toBe(expected);
  });
});

describe("route index", () => {
  const a = serviceRecord({ cluster: "a", service: "default/web", ipv4: [ep("10.0.0.1")] });
  const api = serviceRecord({
    cluster: "a",
    service: "default/api",
    pathPrefix: "/api/",
    ipv4: [ep("10.0.0.2")],
  });
  const b = serviceRecord({ cluster: "b", service: "default/web", ipv4: [ep("10.1.0.1")] });

  it("picks the longest matching path prefix on a segment boundary", () => {
    const index = buildRouteIndex(snapshotOf([{ name: "a", records: [a, api] }]));
    expect(lookupRoute(index, "app.example", "/api/users")?.pathPrefix).toBe("/api");
    expect(lookupRoute(index, "app.example", "/apix")?.pathPrefix).toBe("/");
  });

  it.each([
    ["shop.app.example", "default/wild"],
    ["exact.app.example", "default/exact"],
    ["a.b.app.example", undefined],
    ["app.example", undefined],
  ])("matches %s against a one-label wildcard host only when no exact host exists", (host, expected) => {
    const wild = serviceRecord({
      cluster: "a",
      service: "default/wild",
      hosts: ["*.app.example"],
      ipv4: [ep("10.0.0.7")],
    });
    const exact = serviceRecord({
      cluster: "a",
      service: "default/exact",
      hosts: ["exact.app.example"],
      ipv4: [ep("10.0.0.8")],
    });
    const index = buildRouteIndex(snapshotOf([{ name: "a", records: [wild, exact] }]));
    expect(lookupRoute(index, host, "/")?.serving[0]?.record.service).toBe(expected);
  });

  it("answers undefined for a host nobody published", () => {
    const index = buildRouteIndex(snapshotOf([{ name: "a", records: [a] }]));
    expect(lookupRoute(index, "evil.example", "/")).toBeUndefined();
  });

  it.each([
    ["gathers the same host and prefix from every cluster", false, false, ["a", "b"], false],
    ["drops a stale cluster while another one is fresh", true, false, ["b"], false],
    ["serves every stale cluster when all of them are stale (fail static)", true, true, ["a", "b"], true],
  ])("%s", (_what, staleA, staleB, serving, failStatic) => {
    const index = buildRouteIndex(
      snapshotOf([
        { name: "a", records: [a], stale: staleA },
        { name: "b", records: [b], stale: staleB },
      ]),
    );
    const route = lookupRoute(index, "app.example", "/");
    expect(route?.serving.map((c) => c.cluster)).toEqual(serving);
    expect(route?.candidates.map((c) => c.cluster)).toEqual(["a", "b"]);
    expect(route?.failStatic).toBe(failStatic);
  });

  it("keeps the lexically first service when two of one cluster claim the same route", () => {
    const other = serviceRecord({ cluster: "a", service: "default/aaa", ipv4: [ep("10.0.0.9")] });
    const index = buildRouteIndex(snapshotOf([{ name: "a", records: [a, other] }]));
    const route = lookupRoute(index, "app.example", "/");
    expect(route?.serving.map((c) => c.record.service)).toEqual(["default/aaa"]);
    expect(route?.shadowed).toEqual([{ cluster: "a", service: "default/web" }]);
  });

  it("memoises the index on the snapshot object", () => {
    const snapshot = snapshotOf([{ name: "a", records: [a] }]);
    expect(routeIndexOf(snapshot)).toBe(routeIndexOf(snapshot));
    expect(routeIndexOf(snapshotOf([{ name: "a", records: [a] }]))).not.toBe(routeIndexOf(snapshot));
  });
});
