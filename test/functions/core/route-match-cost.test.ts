import { describe, expect, it } from "vitest";
import { buildRouteTable, matchRoute, type RouteTable } from "../../../functions/core/routes/route-table.js";
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
