import { describe, expect, it } from "vitest";
import {
  coldIndexCommands,
  coldRecordCommands,
  hostPatterns,
  readColdIndex,
  readColdRecords,
} from "../../../functions/workers/delta-cold.js";
import { hostIndexMembers } from "../../../store/keys.js";
import { MAX_HOST_PATTERN_LENGTH } from "../../../store/routes.js";
import {
  beat,
  ok,
  PREFIX,
  rawRoute,
  rawService,
  replyError,
  serviceV2,
  warningsWithLog,
} from "./delta-fixtures.js";

describe("the host index patterns a cold request reads", () => {
  const cases: [string, string[]][] = [
    ["shop.example.test", ["shop.example.test", "*.example.test", "*.test", "*"]],
    ["localhost", ["localhost", "*"]],
    ["a.b", ["a.b", "*.b", "*"]],
  ];
  for (const [host, patterns] of cases) {
    it(`${host}: itself, each parent wildcard, the catch-all`, () => {
      expect(hostPatterns(host)).toEqual(patterns);
    });
  }

  it("reads no wildcard longer than a stored pattern may be, however many labels a client's Host has", () => {
    const host = `${"a.".repeat(8_000)}example.test`;
    const patterns = hostPatterns(host);
    expect(patterns.filter((pattern) => pattern.length > MAX_HOST_PATTERN_LENGTH)).toEqual([]);
    expect(patterns.length).toBeLessThanOrEqual(MAX_HOST_PATTERN_LENGTH / 2 + 1);
    expect(patterns.slice(-3)).toEqual(["*.example.test", "*.test", "*"]);
  });
});

describe("reading the host index of a cold request", () => {
  const web = serviceV2("east", "shop/web", "10.0.0.1", ["web.test"]);
  const members = hostIndexMembers(web.route);
  /** One cluster's replies for host web.test: patterns web.test, *.test, *; lease, heartbeat, index, services. */
  const clusterReplies = (
    exact: unknown[],
    { lease = 1, heartbeat = 1, index = 1, services = 1 }: Partial<Record<string, number>> = {},
  ) => [ok(exact), ok([]), ok([]), ok(lease), beat(heartbeat), ok(index), ok(services)];

  it("asks each cluster for every pattern of the host, the lease, the heartbeat record, whether the index and the services exist", () => {
    expect(coldIndexCommands(PREFIX, ["east"], "web.test")).toEqual([
      ["zrangebylex", "t:{east}:hosts", "[web.test\x1f", "(web.test\x20"],
      ["zrangebylex", "t:{east}:hosts", "[*.test\x1f", "(*.test\x20"],
      ["zrangebylex", "t:{east}:hosts", "[*\x1f", "(*\x20"],
      ["exists", "t:{east}:lease"],
      ["get", "t:{east}:heartbeat"],
      ["exists", "t:{east}:hosts"],
      ["exists", "t:{east}:services"],
    ]);
  });

  it("names the routes and services the members list, per cluster, with the cluster's lease and heartbeat record", () => {
    const index = readColdIndex(["east", "west"], "web.test", [
      ...clusterReplies(members),
      ...clusterReplies(members, { lease: 0 }),
    ]);
    expect(index.incomplete).toBeUndefined();
    const heartbeat = expect.objectContaining({ region: "eu-central", location: { lat: 50.11, long: 8.68 } });
    expect(index.clusters).toEqual([
      { name: "east", stale: false, routes: ["annotation:shop/web"], services: ["shop/web"], heartbeat },
      { name: "west", stale: true, routes: ["annotation:shop/web"], services: ["shop/web"], heartbeat },
    ]);
    expect(coldRecordCommands(PREFIX, index)[0]).toEqual(["hmget", "t:{east}:routes", "annotation:shop/web"]);
  });

  it("leaves out a cluster without its heartbeat, as the whole read does", () => {
    const index = readColdIndex(["east"], "web.test", clusterReplies(members, { heartbeat: 0 }));
    expect(index.clusters).toEqual([]);
    expect(index.incomplete).toBeUndefined();
  });

  it("cannot answer for a cluster with service records but no host index (a sync before store format 2)", () => {
    const index = readColdIndex(["east"], "web.test", clusterReplies([], { index: 0, services: 1 }));
    expect(index.incomplete).toBe("cluster east has no host index");
  });

  it("cannot answer when a cluster's keys are unreadable", () => {
    const replies = clusterReplies(members);
    replies[0] = replyError("WRONGTYPE Operation against a key holding the wrong kind of value");
    expect(readColdIndex(["east"], "web.test", replies).incomplete).toBe(
      "cluster east unreadable: WRONGTYPE Operation against a key holding the wrong kind of value",
    );
  });

  it("decodes only the named records into the cluster's view", () => {
    const index = readColdIndex(["east"], "web.test", clusterReplies(members));
    const views = readColdRecords(
      index,
      [ok([rawRoute(web.route)]), ok([rawService(web.record)])],
      warningsWithLog().warnings,
    );
    expect(views?.map((view) => [view.name, [...view.routes.keys()], [...view.servicesV2.keys()]])).toEqual([
      ["east", ["annotation:shop/web"], ["shop/web"]],
    ]);
  });
});
