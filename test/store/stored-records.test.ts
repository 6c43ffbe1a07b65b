import { describe, expect, it } from "vitest";
import { createWarnOnce } from "../../lib/warn-once.js";
import { decodeChangeEntry } from "../../store/changes.js";
import { annotationRoute } from "../../store/legacy.js";
import { serializeServiceRecord } from "../../store/records.js";
import type { RouteRecord } from "../../store/routes.js";
import {
  decodeServiceRecordV2,
  type ServiceRecordV2,
  serializeServiceRecordV2,
  serviceRecordFromV1,
} from "../../store/services.js";
import { clusterView, decodeClusterRecords } from "../../store/stored-records.js";
import { endpoint, serviceRecord } from "../e2e/support/contract-layout.js";
import { capturingLogger } from "../support/loggers.js";

const v1 = serviceRecord({ cluster: "east", service: "shop/web", ipv4: [endpoint("10.0.0.1", 8080)] });
const v2: ServiceRecordV2 = {
  v: 2,
  cluster: "east",
  service: "shop/api",
  ports: [
    {
      name: "http",
      number: 80,
      ipv4: { endpoints: [endpoint("10.0.0.2", 8080)], fallback: false, draining: [] },
      ipv6: { endpoints: [], fallback: false, draining: [] },
    },
    {
      name: "grpc",
      number: 9090,
      ipv4: { endpoints: [endpoint("10.0.0.2", 9000)], fallback: false, draining: [] },
      ipv6: { endpoints: [], fallback: false, draining: [] },
    },
  ],
};
const route: RouteRecord = {
  v: 2,
  id: "httproute:shop/api",
  source: "httproute",
  createdAt: 1_000,
  hostnames: ["api.example.test"],
  wildcard: "suffix",
  rules: [
    {
      matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }],
      filters: {},
      backends: [{ service: "shop/api", port: 9090, weight: 1 }],
    },
  ],
};

function decoded(services: [string, string][], routes: [string, string][] = []) {
  const { logger, lines } = capturingLogger();
  const records = decodeClusterRecords("east", services, routes, createWarnOnce(logger));
  return { view: clusterView("east", false, records), lines };
}

describe("a cluster's stored records, whatever their schema version", () => {
  it("serves a version 1 record as a single-port version 2 record plus its annotation route", () => {
    const { view } = decoded([["shop/web", serializeServiceRecord(v1)]]);
    expect(view.servicesV2.get("shop/web")).toEqual(serviceRecordFromV1(v1));
    expect(view.servicesV2.get("shop/web")?.ports).toEqual([
      { name: "http", number: 80, ipv4: v1.ipv4, ipv6: v1.ipv6 },
    ]);
    expect(view.services.get("shop/web")).toEqual(v1);
    expect([...view.routes.values()]).toEqual([annotationRoute(v1)]);
  });

  it("serves version 2 service and route records as stored", () => {
    const { view, lines } = decoded(
      [["shop/api", serializeServiceRecordV2(v2)]],
      [[route.id, JSON.stringify(route)]],
    );
    expect(view.servicesV2.get("shop/api")).toEqual(v2);
    expect(view.services.size).toBe(0);
    expect([...view.routes.entries()]).toEqual([[route.id, route]]);
    expect(lines).toEqual([]);
  });

  it("does not read a version 1 sync's routes-hash values: its routes come from its service records", () => {
    const legacyRouteValue = JSON.stringify({
      v: 1,
      service: "shop/web",
      hosts: ["x.test"],
      pathPrefix: "/",
    });
    const { view, lines } = decoded(
      [["shop/web", serializeServiceRecord(v1)]],
      [["shop/web", legacyRouteValue]],
    );
    expect([...view.routes.keys()]).toEqual(["annotation:shop/web"]);
    expect(lines).toEqual([]);
  });

  it("prefers a stored route over the annotation route a version 1 record stands for", () => {
    const stored = { ...annotationRoute(v1, 5_000), hostnames: ["moved.example.test"] };
    const { view } = decoded(
      [["shop/web", serializeServiceRecord(v1)]],
      [[stored.id, JSON.stringify(stored)]],
    );
    expect(view.routes.get("annotation:shop/web")).toEqual(stored);
  });

  it.each([
    ["not JSON", "shop/web", "{", /not JSON/],
    ["a record naming another service", "shop/other", serializeServiceRecordV2(v2), /names service/],
    [
      "repeated port numbers",
      "shop/api",
      JSON.stringify({ ...v2, ports: [v2.ports[0], v2.ports[0]] }),
      /port numbers repeat/,
    ],
    ["a version 0 record", "shop/web", JSON.stringify({ ...v1, v: 0 }), /^v:/],
  ])("skips and reports a service record with %s", (_what, field, raw, reason) => {
    const { view, lines } = decoded([[field, raw]]);
    expect(view.servicesV2.size).toBe(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: "skipping invalid service record",
      cluster: "east",
      service: field,
    });
    expect(String(lines[0]?.reason)).toMatch(reason);
  });

  it("skips and reports a route record whose id is not its field", () => {
    const { view, lines } = decoded([], [["httproute:shop/other", JSON.stringify(route)]]);
    expect(view.routes.size).toBe(0);
    expect(lines[0]).toMatchObject({ msg: "skipping invalid route record", route: "httproute:shop/other" });
  });

  it("refuses a newer schema version with one clear line per cluster and version", () => {
    const { logger, lines } = capturingLogger();
    const warnings = createWarnOnce(logger);
    const future = (service: string, version: number) => JSON.stringify({ ...v2, service, v: version });
    const load = (cluster: string, version: number) =>
      decodeClusterRecords(
        cluster,
        [
          ["shop/a", future("shop/a", version)],
          ["shop/b", future("shop/b", version)],
        ],
        [["httproute:shop/c", JSON.stringify({ ...route, id: "httproute:shop/c", v: version })]],
        warnings,
      );
    expect(load("east", 3).servicesV2.size).toBe(0);
    load("east", 3);
    load("west", 3);
    load("east", 4);
    // Made-up versions far past the newest: one line for all of them.
    for (let version = 100; version < 1_100; version++) load("east", version);
    expect(lines.map((line) => [line.msg, line.cluster, line.version])).toEqual([
      [
        "record schema version 3 is newer than this router understands (2): upgrade routers before syncs",
        "east",
        3,
      ],
      [
        "record schema version 3 is newer than this router understands (2): upgrade routers before syncs",
        "west",
        3,
      ],
      [
        "record schema version 4 is newer than this router understands (2): upgrade routers before syncs",
        "east",
        4,
      ],
      [
        "record schema version 100 is newer than this router understands (2): upgrade routers before syncs",
        "east",
        100,
      ],
    ]);
  });

  it("round-trips a version 2 record through its canonical serialised form, ports sorted", () => {
    const shuffled = { ...v2, ports: [...v2.ports].reverse() };
    expect(serializeServiceRecordV2(shuffled)).toBe(serializeServiceRecordV2(v2));
    expect(decodeServiceRecordV2(serializeServiceRecordV2(v2))).toEqual({ ok: true, value: v2 });
  });
});

describe("change stream entries", () => {
  it.each([
    [
      "a version 1 entry stands for its service and its annotation route",
      { service: "shop/web", op: "put" },
      {
        ok: true,
        changes: [
          { kind: "service", id: "shop/web", op: "put" },
          { kind: "route", id: "annotation:shop/web", op: "put" },
        ],
      },
    ],
    [
      "a version 2 service entry",
      { kind: "service", id: "shop/web", op: "delete", v: "2" },
      { ok: true, changes: [{ kind: "service", id: "shop/web", op: "delete" }] },
    ],
    [
      "a version 2 route entry",
      { kind: "route", id: "httproute:shop/web", op: "put" },
      { ok: true, changes: [{ kind: "route", id: "httproute:shop/web", op: "put" }] },
    ],
    ["a newer version", { kind: "route", id: "x", op: "put", v: "3" }, { ok: false, newerVersion: 3 }],
    ["a service entry with a bad id", { kind: "service", id: "web", op: "put" }, { ok: false }],
    ["an unknown kind", { kind: "gateway", id: "x", op: "put" }, { ok: false }],
    ["no op", { service: "shop/web" }, { ok: false }],
  ])("%s", (_what, fields, expected) => {
    expect(decodeChangeEntry(fields as Record<string, string>)).toEqual(expected);
  });
});
