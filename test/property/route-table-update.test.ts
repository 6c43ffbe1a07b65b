import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildRouteTable,
  matchRoute,
  type RouteTable,
  type RouteTableKind,
} from "../../functions/core/routes/route-table.js";
import { updateRouteTable } from "../../functions/core/routes/route-table-update.js";
import type { RouteRecord, RouteSource } from "../../store/routes.js";

/**
 * An update of a route table (core/routes/route-table-update.ts) must leave the table a full build over the
 * final routes gives: the same candidates in the same order in every bucket, the same listeners, and so the
 * same match for every request, whatever sequence of puts and removes led there; a table of either kind
 * (HTTP routes, TLSRoutes) holding only routes of its kind.
 */
type Entry = { readonly route: RouteRecord };

const IDS = [
  "httproute:a/r0",
  "httproute:a/r1",
  "httproute:a/r2",
  "httproute:b/r3",
  "ingress:b/r4",
  "annotation:c/r5",
  "tlsroute:a/t6",
  "tlsroute:b/t7",
];
const HOSTS = ["h.test", "k.test", "*.h.test", "*.test", "x.h.test"];

const routeArb = (id: string): fc.Arbitrary<RouteRecord> =>
  fc
    .record({
      createdAt: fc.integer({ min: 0, max: 2 }),
      hostnames: fc.uniqueArray(fc.constantFrom(...HOSTS), { maxLength: 3 }),
      suffix: fc.boolean(),
      listeners: fc.option(
        fc.array(
          fc.record({
            gateway: fc.constantFrom("ns/g1", "ns/g2"),
            port: fc.constantFrom(80, 8080),
            hostnames: fc.uniqueArray(fc.constantFrom(...HOSTS), { maxLength: 2 }),
            listenerHostname: fc.option(fc.constantFrom("h.test", "*.test"), { nil: undefined }),
          }),
          { maxLength: 2 },
        ),
        { nil: undefined },
      ),
      rules: fc.array(
        fc.array(
          fc.record({
            type: fc.constantFrom("Exact" as const, "PathPrefix" as const),
            value: fc.constantFrom("/", "/a", "/a/b", "/b"),
            method: fc.option(fc.constantFrom("GET" as const, "POST" as const), { nil: undefined }),
          }),
          { minLength: 1, maxLength: 3 },
        ),
        { minLength: 1, maxLength: 3 },
      ),
    })
    .map(({ createdAt, hostnames, suffix, listeners, rules }) => ({
      v: 2,
      id,
      source: id.slice(0, id.indexOf(":")) as RouteSource,
      createdAt,
      hostnames,
      wildcard: suffix ? "suffix" : "one-label",
      ...(listeners
        ? {
            listeners: listeners.map(({ listenerHostname, ...listener }) => ({
              ...listener,
              ...(listenerHostname === undefined ? {} : { listenerHostname }),
            })),
          }
        : {}),
      rules: rules.map((matches) => ({
        matches: matches.map(({ type, value, method }) => ({
          path: { type, value },
          headers: [],
          ...(method ? { method } : {}),
        })),
        filters: {},
        backends: [],
      })),
    }));

const changeArb = fc
  .constantFrom(...IDS)
  .chain((id) => fc.tuple(fc.constant(id), fc.option(routeArb(id), { nil: undefined, freq: 3 })));
const initialArb = fc.tuple(...IDS.map((id) => fc.option(routeArb(id), { nil: undefined })));
const batchesArb = fc.array(fc.array(changeArb, { minLength: 1, maxLength: 3 }), {
  minLength: 1,
  maxLength: 8,
});
const gatewaysArb = fc.constantFrom(undefined, new Set(["ns/g1"]));
const kindArb = fc.constantFrom<RouteTableKind>("http", "passthrough");

/** A bucket as its order and contents: route, rule, match and listeners of each candidate. */
function described(table: RouteTable<Entry>) {
  const bucket = (candidates: RouteTable<Entry>["anyHost"] | undefined) =>
    (candidates ?? []).map((c) => [
      c.entry.route.id,
      c.ruleIndex,
      c.matchIndex,
      c.deep,
      JSON.stringify(c.listeners),
    ]);
  const keyed = (map: RouteTable<Entry>["exact"]) =>
    [...map.keys()].sort().map((key) => [key, bucket(map.get(key))]);
  return {
    exact: keyed(table.exact),
    wildcard: keyed(table.wildcard),
    anyHost: bucket(table.anyHost),
    ports: [...table.listenerPorts].sort(),
    hostnames: [...table.listenerHostnames].map(([key, names]) => [key, [...names].sort()]).sort(),
    entries: [...table.entries.keys()].sort(),
  };
}

describe("a route table updated change by change", () => {
  it("equals the table built whole from the final routes, and matches every request the same", () => {
    fc.assert(
      fc.property(initialArb, batchesArb, gatewaysArb, kindArb, (initial, batches, gateways, kind) => {
        const routes = new Map<string, RouteRecord>();
        for (const route of initial) if (route) routes.set(route.id, route);
        let table = buildRouteTable(
          [...routes.values()].map((route) => ({ route })),
          gateways,
          kind,
        );
        for (const batch of batches) {
          const unique = new Map(batch);
          for (const [id, route] of unique) {
            if (route) routes.set(id, route);
            else routes.delete(id);
          }
          const next = updateRouteTable<Entry>(
            table,
            [...unique].map(([id, route]) => [id, route && { route }] as const),
            gateways,
            kind,
          );
          expect(next).toBeDefined();
          if (next) table = next;
        }
        const whole = buildRouteTable(
          [...routes.values()].map((route) => ({ route })),
          gateways,
          kind,
        );
        expect(described(table)).toEqual(described(whole));
        for (const id of described(table).entries)
          expect(id.startsWith("tlsroute:")).toBe(kind === "passthrough");
        for (const host of ["h.test", "k.test", "x.h.test", "y.x.h.test", "z.test", "other"]) {
          for (const path of ["/", "/a", "/a/b/c", "/b"]) {
            for (const port of [undefined, 80, 8080]) {
              const facts = { path, method: "GET", headers: new Headers(), port };
              const updated = matchRoute(table, host, facts);
              const built = matchRoute(whole, host, facts);
              expect(
                updated && [updated.route.id, updated.ruleIndex, updated.matchIndex, updated.hostname],
              ).toEqual(built && [built.route.id, built.ruleIndex, built.matchIndex, built.hostname]);
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("leaves the table it started from as it was", () => {
    fc.assert(
      fc.property(initialArb, fc.array(changeArb, { minLength: 1, maxLength: 4 }), (initial, changes) => {
        const entries = initial.flatMap((route) => (route ? [{ route }] : []));
        const table = buildRouteTable(entries);
        const before = described(table);
        updateRouteTable<Entry>(
          table,
          [...new Map(changes)].map(([id, route]) => [id, route && { route }] as const),
        );
        expect(described(table)).toEqual(before);
      }),
      { numRuns: 100 },
    );
  });
});
