import { describe, expect, it } from "vitest";
import { CHANGE_BATCH, planRefresh, refreshCommands } from "../../../functions/workers/delta-refresh.js";
import {
  API,
  beat,
  clusterReplies,
  discovery,
  EAST,
  entry,
  OWN_EAST,
  ok,
  PREFIX,
  replyError,
  storeState,
  WEB,
  WEST,
  warningsWithLog,
} from "./delta-fixtures.js";

const [_web, _api, east, west] = [WEB, API, EAST, WEST];

describe("planning a refresh from the stream, lease and heartbeat replies", () => {
  it("sends the registry, one SCAN step and three commands per known cluster, in one pipeline", () => {
    const commands = refreshCommands(PREFIX, storeState({ east, west }, ["gone"]));
    expect(commands.map(([name]) => name)).toEqual([
      "smembers",
      "scan",
      "xrange",
      "exists",
      "get",
      "xrange",
      "exists",
      "get",
      "exists",
    ]);
    // Inclusive from the last applied entry, one more than a batch.
    expect(commands[2]).toEqual([
      "xrange",
      "t:{east}:changes",
      "5-0",
      "+",
      "COUNT",
      String(CHANGE_BATCH + 1),
    ]);
  });

  const cases: {
    name: string;
    entries: unknown;
    lastChangeId?: string;
    lease?: number;
    heartbeat?: number;
    reload?: string;
    services?: string[];
    routes?: string[];
  }[] = [
    { name: "nothing new: only our own last entry comes back", entries: [OWN_EAST] },
    {
      name: "a new service entry names that service only",
      entries: [OWN_EAST, entry("6-0", "service", "shop/api")],
      services: ["shop/api"],
    },
    {
      name: "a new route entry names that route only",
      entries: [OWN_EAST, entry("6-0", "route", "httproute:shop/front")],
      routes: ["httproute:shop/front"],
    },
    {
      name: "a version 1 entry names the service and its annotation route",
      entries: [OWN_EAST, ["6-0", ["service", "shop/api", "op", "put"]]],
      services: ["shop/api"],
      routes: ["annotation:shop/api"],
    },
    {
      name: "our last entry trimmed away: the cluster is read whole",
      entries: [entry("9-0", "service", "shop/api")],
      reload: "change stream no longer holds our last entry",
    },
    {
      name: "the stream is gone or was reset below our entry: the cluster is read whole",
      entries: [],
      reload: "change stream no longer holds our last entry",
    },
    {
      name: "read from an empty stream: every entry is new",
      lastChangeId: "0-0",
      entries: [entry("1-0", "service", "shop/web")],
      services: ["shop/web"],
    },
    {
      name: "a full batch behind: the cluster is read whole",
      entries: [
        OWN_EAST,
        ...Array.from({ length: CHANGE_BATCH }, (_, i) => entry(`${10 + i}-0`, "service", "shop/web")),
      ],
      reload: "more changes than one batch",
    },
    {
      name: "an unreadable stream: the cluster is read whole (and left out if it stays so)",
      entries: undefined,
      reload: "keys unreadable: WRONGTYPE Operation against a key holding the wrong kind of value",
    },
  ];

  for (const testCase of cases) {
    it(testCase.name, () => {
      const cluster = { ...east, lastChangeId: testCase.lastChangeId ?? east.lastChangeId };
      const state = storeState({ east: cluster });
      const stream =
        testCase.entries === undefined
          ? replyError("WRONGTYPE Operation against a key holding the wrong kind of value")
          : ok(testCase.entries);
      const replies = [
        ...discovery(["east"]),
        stream,
        ok(testCase.lease ?? 1),
        beat(testCase.heartbeat ?? 1),
      ];
      const plan = planRefresh(PREFIX, state, replies, warningsWithLog().warnings);
      expect(Object.fromEntries(plan.reloads)).toEqual(testCase.reload ? { east: testCase.reload } : {});
      const change = plan.changes[0];
      expect(change?.services ?? []).toEqual(testCase.services ?? []);
      expect(change?.routes ?? []).toEqual(testCase.routes ?? []);
      expect(plan.flagsChanged).toBe(false);
    });
  }

  it("marks a cluster whose lease ran out stale, and nothing else", () => {
    const plan = planRefresh(
      PREFIX,
      storeState({ east }),
      [...discovery(["east"]), ...clusterReplies([OWN_EAST], 0)],
      warningsWithLog().warnings,
    );
    expect(plan.flagsChanged).toBe(true);
    expect(plan.clusters.get("east")?.view.stale).toBe(true);
    expect(plan.reloads.size).toBe(0);
  });

  it("keeps a cluster whose heartbeat vanished (the store lost its keys), stale and unregistered: fail static", () => {
    const plan = planRefresh(
      PREFIX,
      storeState({ east }),
      [...discovery([]), ...clusterReplies([], 0, 0)],
      warningsWithLog().warnings,
    );
    const kept = plan.clusters.get("east");
    expect(kept?.registered).toBe(false);
    expect(kept?.view.stale).toBe(true);
    expect(kept?.records).toBe(east.records);
    expect(plan.reloads.size).toBe(0);
  });

  it("reads a cluster whole once its heartbeat is back after the store lost it", () => {
    const lost = { ...east, registered: false };
    const plan = planRefresh(
      PREFIX,
      storeState({ east: lost }),
      [...discovery(["east"]), ...clusterReplies([], 1, 1)],
      warningsWithLog().warnings,
    );
    expect(Object.fromEntries(plan.reloads)).toEqual({
      east: "its heartbeat is back after the store lost it",
    });
  });

  it("reads a new cluster of the registry or of a heartbeat key whole, and only looks at an absent one's heartbeat", () => {
    const replies = [
      ok(["east", "north", "Not-Valid"]),
      ok(["17", ["t:{south}:heartbeat"]]),
      ...clusterReplies([OWN_EAST]),
      ok(0), // gone: still no heartbeat
    ];
    const { warnings, entries } = warningsWithLog();
    const plan = planRefresh(PREFIX, storeState({ east }, ["gone"]), replies, warnings);
    expect([...plan.reloads.keys()].sort()).toEqual(["north", "south"]);
    expect([...plan.absent]).toEqual(["gone"]);
    expect(plan.scanCursor).toBe("17");
    expect(entries.filter((e) => e.level === "warn").map((e) => e.message)).toEqual([
      "ignoring invalid cluster names",
    ]);
  });
});
