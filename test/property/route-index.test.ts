import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INDEXED_BUCKET_SIZE } from "../../functions/core/routes/path-index.js";
import { compareRanks, rankOf } from "../../functions/core/routes/precedence.js";
import { requestMatches } from "../../functions/core/routes/request-match.js";
import { buildRouteTable, matchRoute } from "../../functions/core/routes/route-table.js";
import { pathOf } from "../../store/paths.js";
import type { RouteMatch, RouteRecord } from "../../store/routes.js";

/**
 * A large host bucket is matched through its path index (core/routes/path-index.ts); whatever the routes, the
 * winner must be the one a scan of every match in precedence order finds (precedence.ts, request-match.ts).
 */
const segment = fc.constantFrom("a", "b", "ab", "", "c.d");
const pathFrom = (segments: fc.Arbitrary<string>, minLength: number) =>
  fc
    .array(segments, { minLength, maxLength: 4 })
    .chain((parts) =>
      fc.constantFrom("", "/").map((tail) => `/${parts.join("/")}${parts.length > 0 ? tail : ""}`),
    );
/** Route paths; requests also ask for a segment no route names, which only the fallback route serves. */
const pathArb = pathFrom(segment, 1);
const requestPathArb = pathFrom(fc.oneof(segment, fc.constant("zz")), 0);
const matchArb: fc.Arbitrary<RouteMatch> = fc.record(
  {
    path: fc.record({ type: fc.constantFrom("Exact" as const, "PathPrefix" as const), value: pathArb }),
    headers: fc.array(fc.record({ name: fc.constantFrom("x-a", "x-b"), value: fc.constantFrom("1", "2") }), {
      maxLength: 1,
    }),
    method: fc.constantFrom("GET" as const, "POST" as const),
  },
  { requiredKeys: ["path", "headers"] },
);
const routeArb = (index: number): fc.Arbitrary<RouteRecord> =>
  fc
    .record({
      createdAt: fc.integer({ min: 0, max: 3 }),
      fallback: fc.boolean(),
      rules: fc.array(fc.array(matchArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }),
    })
    .map(({ createdAt, fallback, rules }) => ({
      v: 2,
      id: `httproute:shop/r${index}`,
      source: "httproute",
      createdAt,
      hostnames: ["h.test"],
      wildcard: "suffix",
      ...(fallback && index % 5 === 0 ? { fallback: true as const } : {}),
      rules: rules.map((matches) => ({ matches, filters: {}, backends: [] })),
    }));
/** An Ingress defaultBackend: tried after every other route of the host. */
const fallback: RouteRecord = {
  v: 2,
  id: "ingress:shop/default",
  source: "ingress",
  createdAt: 0,
  hostnames: ["h.test"],
  wildcard: "one-label",
  fallback: true,
  rules: [
    { matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }], filters: {}, backends: [] },
  ],
};
const routesArb = fc
  .integer({ min: 30, max: 60 })
  .chain((count) => fc.tuple(...Array.from({ length: count }, (_, i) => routeArb(i))))
  .map((routes) => [...routes, fallback]);
const requestArb = fc.record({
  path: fc.tuple(requestPathArb, fc.constantFrom("", "?q=/a")).map(([path, query]) => `${path}${query}`),
  method: fc.constantFrom("GET", "POST"),
  headers: fc.dictionary(fc.constantFrom("x-a", "x-b"), fc.constantFrom("1", "2")),
});

type RequestCase = { path: string; method: string; headers: Record<string, string> };

/** Every match of every route in precedence order; the first the request satisfies. */
function scanned(routes: readonly RouteRecord[], request: RequestCase) {
  const all = routes.flatMap((route) =>
    route.rules.flatMap((rule, ruleIndex) =>
      rule.matches.map((_, matchIndex) => ({
        route,
        ruleIndex,
        matchIndex,
        rank: rankOf(route, ruleIndex, matchIndex),
      })),
    ),
  );
  all.sort((a, b) => compareRanks(a.rank, b.rank));
  const facts = { ...request, headers: new Headers(request.headers) };
  const found = all.find(({ route, ruleIndex, matchIndex }) => {
    const match = route.rules[ruleIndex]?.matches[matchIndex] as RouteMatch;
    return requestMatches(match, pathOf(request.path), facts);
  });
  return found && [found.route.id, found.ruleIndex, found.matchIndex];
}

describe("the path index of a large host bucket", () => {
  it("picks the match a scan of the whole bucket in precedence order picks", () => {
    fc.assert(
      fc.property(routesArb, fc.array(requestArb, { minLength: 1, maxLength: 20 }), (routes, requests) => {
        const table = buildRouteTable(routes.map((route) => ({ route })));
        const bucket = table.exact.get("h.test") ?? [];
        fc.pre(bucket.length >= INDEXED_BUCKET_SIZE);
        for (const request of requests) {
          const found = matchRoute(table, "h.test", { ...request, headers: new Headers(request.headers) });
          expect(found && [found.route.id, found.ruleIndex, found.matchIndex]).toEqual(
            scanned(routes, request),
          );
        }
      }),
      { numRuns: 200 },
    );
  });
});
