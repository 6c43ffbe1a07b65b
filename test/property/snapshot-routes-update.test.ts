import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SnapshotRoutes } from "../../functions/core/snapshot/served-routes.js";
import { buildSnapshotRoutes, snapshotRoutesOf } from "../../functions/core/snapshot/snapshot-routes.js";
import type { RouteRecord, RouteSource } from "../../store/routes.js";
import { serviceRecordFromV1 } from "../../store/services.js";
import type { ClusterView, Snapshot } from "../../store/store.js";
import {
  type ClusterRecords,
  clusterView,
  type DecodedService,
  NO_RECORDS,
  updatedRecords,
} from "../../store/stored-records.js";
import { ep, serviceRecord } from "../functions/fixtures.js";

/**
 * A router's routes of each new snapshot are updated from the last ones (core/snapshot/snapshot-routes-update.ts); after
 * any sequence of route and service changes in any clusters they must be what a full build of the final
 * snapshot gives: the same table, the same served routes, and backends resolving to the same service records.
 */
const CLUSTERS = ["c0", "c1", "c2"];
const IDS = ["httproute:a/r0", "httproute:a/r1", "httproute:b/r2", "tlsroute:a/t3"];
const SERVICES = ["a/s0", "a/s1", "b/s2"];

const routeArb = (id: string): fc.Arbitrary<RouteRecord> =>
  fc
    .record({
      hostnames: fc.uniqueArray(fc.constantFrom("h.test", "k.test", "*.test"), { maxLength: 2 }),
      services: fc.uniqueArray(fc.constantFrom(...SERVICES), { minLength: 1, maxLength: 2 }),
      mirror: fc.option(fc.constantFrom(...SERVICES), { nil: undefined }),
      path: fc.constantFrom("/", "/a"),
    })
    .map(({ hostnames, services, mirror, path }) => ({
      v: 2,
      id,
      source: id.slice(0, id.indexOf(":")) as RouteSource,
      createdAt: 0,
      hostnames,
      wildcard: "suffix",
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: path }, headers: [] }],
          filters: mirror ? { mirrors: [{ service: mirror, port: 80, percent: 100 }] } : {},
          backends: services.map((service) => ({ service, port: 80, weight: 1 })),
        },
      ],
    }));

type Change =
  | { kind: "route"; cluster: string; id: string; route: RouteRecord | undefined }
  | { kind: "service"; cluster: string; service: string; ip: number | undefined };

const changeArb: fc.Arbitrary<Change> = fc.oneof(
  fc
    .tuple(fc.constantFrom(...CLUSTERS), fc.constantFrom(...IDS))
    .chain(([cluster, id]) =>
      fc
        .option(routeArb(id), { nil: undefined, freq: 4 })
        .map((route) => ({ kind: "route" as const, cluster, id, route })),
    ),
  fc.record({
    kind: fc.constant("service" as const),
    cluster: fc.constantFrom(...CLUSTERS),
    service: fc.constantFrom(...SERVICES),
    ip: fc.option(fc.integer({ min: 1, max: 200 }), { nil: undefined, freq: 4 }),
  }),
);

function decoded(cluster: string, service: string, ip: number): DecodedService {
  const record = serviceRecord({ cluster, service, ipv4: [ep(`10.0.0.${ip}`)] });
  return { record: serviceRecordFromV1(record), v1: undefined };
}

function described(routes: SnapshotRoutes, snapshot: Snapshot) {
  const views = new Map(snapshot.clusters.map((view) => [view.name, view]));
  const served = [...routes.table.entries.values(), ...routes.passthrough.entries.values()]
    .map((entry) => {
      const services = entry.route.rules.flatMap((rule) => [
        ...rule.backends.flatMap((backend) => ("service" in backend ? [backend.service] : [])),
        ...(rule.filters.mirrors ?? []).map((mirror) => mirror.service),
      ]);
      return {
        route: entry.route,
        clusters: entry.clusters.map((view) => view.name),
        failStatic: entry.failStatic,
        publishers: entry.publishers,
        // Same records as the final snapshot's for every Service the route names.
        resolves: entry.clusters.every((view) =>
          services.every(
            (service) => view.servicesV2.get(service) === views.get(view.name)?.servicesV2.get(service),
          ),
        ),
      };
    })
    .sort((a, b) => (a.route.id < b.route.id ? -1 : 1));
  const bucket = (key: string) => routes.table.exact.get(key)?.map((c) => [c.entry.route.id, c.ruleIndex]);
  const passthrough = (key: string) => routes.passthrough.exact.get(key)?.map((c) => c.entry.route.id);
  return {
    served,
    ids: routes.routes.map((route) => route.route.id),
    conflicts: [...routes.conflicts].sort((a, b) => (a.id < b.id ? -1 : 1)),
    buckets: [bucket("h.test"), bucket("k.test"), routes.table.wildcard.get("test")?.length],
    passthrough: [
      passthrough("h.test"),
      passthrough("k.test"),
      routes.passthrough.wildcard.get("test")?.length,
    ],
  };
}

describe("a snapshot's routes updated from the last snapshot's", () => {
  it("equal a full build of the final snapshot after any route and service changes", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(changeArb, { minLength: 1, maxLength: 4 }), { maxLength: 10 }),
        (steps) => {
          const records = new Map<string, ClusterRecords>(CLUSTERS.map((name) => [name, NO_RECORDS]));
          const views = new Map<string, ClusterView>(
            CLUSTERS.map((name) => [name, clusterView(name, false, NO_RECORDS)]),
          );
          // A gateways set of its own: the memo of the last routes starts empty for each run.
          const gateways = new Set(["ns/unused"]);
          let version = 0;
          let snapshot: Snapshot = { version, clusters: [...views.values()] };
          let routes = snapshotRoutesOf(snapshot, undefined, gateways);
          for (const step of steps) {
            for (const name of CLUSTERS) {
              const services = new Map<string, DecodedService | undefined>();
              const changed = new Map<string, RouteRecord | undefined>();
              for (const change of step) {
                if (change.cluster !== name) continue;
                if (change.kind === "route") changed.set(change.id, change.route);
                else
                  services.set(
                    change.service,
                    change.ip === undefined ? undefined : decoded(name, change.service, change.ip),
                  );
              }
              const before = records.get(name) ?? NO_RECORDS;
              const after = updatedRecords(before, services, changed);
              const view = views.get(name);
              records.set(name, after);
              if (view) views.set(name, clusterView(name, false, after, { view, records: before }));
            }
            snapshot = { version: ++version, clusters: [...views.values()] };
            routes = snapshotRoutesOf(snapshot, undefined, gateways);
            expect(routes.index).toBeDefined();
          }
          // No served route pins an older view of its clusters (their old records would stay in memory).
          for (const entry of [...routes.table.entries.values(), ...routes.passthrough.entries.values()]) {
            for (const view of entry.clusters) {
              expect(view.servicesV2).toBe(snapshot.clusters.find((c) => c.name === view.name)?.servicesV2);
            }
          }
          expect(described(routes, snapshot)).toEqual(
            described(buildSnapshotRoutes(snapshot, undefined, gateways), snapshot),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
