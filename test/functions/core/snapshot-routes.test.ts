import { describe, expect, it } from "vitest";
import { normaliseHost } from "../../../functions/core/http/hosts.js";
import { hasPathPrefix } from "../../../functions/core/routes/request-match.js";
import { shadowedBy } from "../../../functions/core/routes/shadowing.js";
import { matchRequest } from "../../../functions/core/routing.js";
import type { SnapshotRoutes } from "../../../functions/core/snapshot/served-routes.js";
import { buildSnapshotRoutes, snapshotRoutesOf } from "../../../functions/core/snapshot/snapshot-routes.js";
import { normalisePathPrefix, pathOf } from "../../../store/paths.js";
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

describe("a path under a prefix", () => {
  it.each([
    ["/api", "/api", true],
    ["/api/x", "/api", true],
    ["/api?q=1", "/api", true],
    ["/apix", "/api", false],
    ["/ap", "/api", false],
    ["/anything", "/", true],
  ])("%s under %s is %s", (path, prefix, expected) => {
    expect(hasPathPrefix(pathOf(path), normalisePathPrefix(prefix))).toBe(expected);
  });
});

const GET = (path: string) => ({ path, method: "GET", headers: new Headers() });

function matched(routes: SnapshotRoutes, host: string, path: string) {
  return matchRequest(routes, host, GET(path));
}

/** The Service the winning rule of a GET sends to, or undefined (404). */
function servedService(routes: SnapshotRoutes, host: string, path = "/"): string | undefined {
  const backend = matched(routes, host, path)?.rule.backends[0];
  return backend && "service" in backend ? backend.service : undefined;
}

describe("the routes of a snapshot (version 1 records)", () => {
  const a = serviceRecord({ cluster: "a", service: "default/web", ipv4: [ep("10.0.0.1")] });
  const api = serviceRecord({
    cluster: "a",
    service: "default/api",
    pathPrefix: "/api/",
    ipv4: [ep("10.0.0.2")],
  });
  const b = serviceRecord({ cluster: "b", service: "default/web", ipv4: [ep("10.1.0.1")] });

  it("picks the longest matching path prefix on a segment boundary", () => {
    const routes = buildSnapshotRoutes(snapshotOf([{ name: "a", records: [a, api] }]));
    const prefixOf = (path: string) =>
      normalisePathPrefix(matched(routes, "app.example", path)?.match.path.value ?? "");
    expect(prefixOf("/api/users")).toBe("/api");
    expect(prefixOf("/apix")).toBe("/");
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
    const routes = buildSnapshotRoutes(snapshotOf([{ name: "a", records: [wild, exact] }]));
    expect(servedService(routes, host)).toBe(expected);
  });

  it("answers undefined for a host nobody published", () => {
    const routes = buildSnapshotRoutes(snapshotOf([{ name: "a", records: [a] }]));
    expect(matched(routes, "evil.example", "/")).toBeUndefined();
  });

  it.each([
    ["gathers the same host and prefix from every cluster", false, false, ["a", "b"], false],
    ["drops a stale cluster while another one is fresh", true, false, ["b"], false],
    ["serves every stale cluster when all of them are stale (fail static)", true, true, ["a", "b"], true],
  ])("%s", (_what, staleA, staleB, serving, failStatic) => {
    const routes = buildSnapshotRoutes(
      snapshotOf([
        { name: "a", records: [a], stale: staleA },
        { name: "b", records: [b], stale: staleB },
      ]),
    );
    const route = matched(routes, "app.example", "/")?.entry;
    expect(route?.clusters.map((view) => view.name)).toEqual(serving);
    expect(route?.publishers.map((publisher) => publisher.cluster)).toEqual(["a", "b"]);
    expect(route?.failStatic).toBe(failStatic);
  });

  it("keeps the lexically first service when two of one cluster claim the same route", () => {
    const other = serviceRecord({ cluster: "a", service: "default/aaa", ipv4: [ep("10.0.0.9")] });
    const routes = buildSnapshotRoutes(snapshotOf([{ name: "a", records: [a, other] }]));
    const found = matched(routes, "app.example", "/");
    expect(servedService(routes, "app.example")).toBe("default/aaa");
    if (!found) throw new Error("no route");
    const shadowed = shadowedBy(routes.table, "app.example", found).flatMap((entry) =>
      entry.clusters.map((view) => {
        const backend = entry.route.rules[0]?.backends[0];
        return { cluster: view.name, service: backend && "service" in backend ? backend.service : "" };
      }),
    );
    expect(shadowed).toEqual([{ cluster: "a", service: "default/web" }]);
  });

  it("memoises the routes on the snapshot object", () => {
    const snapshot = snapshotOf([{ name: "a", records: [a] }]);
    expect(snapshotRoutesOf(snapshot)).toBe(snapshotRoutesOf(snapshot));
    expect(snapshotRoutesOf(snapshotOf([{ name: "a", records: [a] }]))).not.toBe(snapshotRoutesOf(snapshot));
  });
});
