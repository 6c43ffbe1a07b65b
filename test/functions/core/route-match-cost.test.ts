import { describe, expect, it } from "vitest";
import { pathCandidates } from "../../../functions/core/routes/path-index.js";
import { buildRouteTable, matchRoute, type RouteTable } from "../../../functions/core/routes/route-table.js";
import type { RouteMatch, RouteRecord } from "../../../store/routes.js";
import { prefix, request, route, rule } from "./route-match-fixtures.js";

/**
 * What one request costs the matcher must grow with the request, not with the request times anything: a
 * client picks its Host, so a long one must not buy quadratic work (each wildcard lookup hashes its key).
 */
type Entry = { readonly route: ReturnType<typeof route> };

/** The table with its wildcard map counting the characters of every key looked up. */
function counting(table: RouteTable<Entry>): { table: RouteTable<Entry>; hashed(): number } {
  let hashed = 0;
  const wildcard = table.wildcard;
  const counted = {
    get: (key: string) => {
      hashed += key.length;
      return wildcard.get(key);
    },
  } as RouteTable<Entry>["wildcard"];
  return { table: { ...table, wildcard: counted }, hashed: () => hashed };
}

const table = buildRouteTable(
  [
    route("httproute:shop/wild", { hostnames: ["*.example.test"], rules: [rule("wild", prefix("/"))] }),
    route("ingress:shop/one", {
      hostnames: ["*.one.test"],
      wildcard: "one-label",
      rules: [rule("one", prefix("/"))],
    }),
  ].map((record) => ({ route: record })),
);

describe("the cost of a request's Host", () => {
  it.each([1_000, 8_000])(
    "looks up wildcard keys of at most a pattern's length for a Host of %i labels",
    (labels) => {
      const host = `${"a.".repeat(labels)}nowhere.test`;
      const { table: measured, hashed } = counting(table);
      expect(matchRoute(measured, host, request("/"))).toBeUndefined();
      expect(hashed()).toBeLessThanOrEqual(2 * "example.test".length);
    },
  );

  it("still finds a deep wildcard under a long Host, and never a one-label one", () => {
    const deep = `${"a.".repeat(2_000)}example.test`;
    expect(matchRoute(table, deep, request("/"))?.hostname).toBe("*.example.test");
    expect(matchRoute(table, `${"a.".repeat(2_000)}one.test`, request("/"))).toBeUndefined();
    expect(matchRoute(table, "b.one.test", request("/"))?.hostname).toBe("*.one.test");
  });
});

/** A route of `count` rules, rule i matching `path(i)`; each match counts the reads of its path. */
function countedRoute(count: number, path: (i: number) => RouteMatch["path"]) {
  let reads = 0;
  const rules = Array.from({ length: count }, (_, i) => {
    const value = path(i);
    const match = {
      get path() {
        reads++;
        return value;
      },
      headers: [],
    } as RouteMatch;
    return { matches: [match], filters: {}, backends: [{ service: `shop/b${i}`, port: 80, weight: 1 }] };
  });
  const record: RouteRecord = {
    v: 2,
    id: "httproute:shop/many",
    source: "httproute",
    createdAt: 1_000,
    hostnames: ["many.test"],
    wildcard: "suffix",
    rules,
  };
  return { record, reads: () => reads, reset: () => (reads = 0) };
}

describe("the cost of a host with many rules", () => {
  it("examines the rules of the request's own path only, among 8,000 Exact paths", () => {
    const counted = countedRoute(8_000, (i) => ({ type: "Exact", value: `/item/${i}` }));
    const table = buildRouteTable([{ route: counted.record }]);
    counted.reset();
    expect(matchRoute(table, "many.test", request("/item/7000"))?.ruleIndex).toBe(7_000);
    expect(matchRoute(table, "many.test", request("/item/x"))).toBeUndefined();
    expect(counted.reads()).toBeLessThanOrEqual(2);
  });

  it("examines the candidates of the request's path and its parent prefixes only, among 8,000 PathPrefix rules", () => {
    const { record } = countedRoute(8_000, (i) => ({ type: "PathPrefix", value: `/team/${i}` }));
    const table = buildRouteTable([{ route: record }]);
    const bucket = table.exact.get("many.test") ?? [];
    const index = table.indexes.get(bucket);
    const examined = (path: string) =>
      index ? pathCandidates(index, path).reduce((sum, list) => sum + list.length, 0) : bucket.length;
    expect([examined("/team/7000/x"), examined("/team/x"), examined("/other")]).toEqual([1, 0, 0]);
    expect(matchRoute(table, "many.test", request("/team/7000/x"))?.ruleIndex).toBe(7_000);
  });
});
