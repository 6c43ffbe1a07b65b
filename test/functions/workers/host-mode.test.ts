import { describe, expect, it } from "vitest";
import type { Reply } from "../../../functions/workers/delta-state.js";
import {
  type HostModeState,
  hostRefreshCommands,
  mergeHostViews,
  readHostRefresh,
  readSizes,
  sizeCommands,
} from "../../../functions/workers/host-mode.js";
import {
  clusterState,
  discovery,
  entry,
  ok,
  PREFIX,
  replyError,
  serviceV2,
  warningsWithLog,
} from "./delta-fixtures.js";

const held: HostModeState = {
  positions: new Map([
    ["east", { lastChangeId: "5-0", stale: false }],
    ["west", { lastChangeId: "0-0", stale: false }],
  ]),
  scanCursor: "0",
};

/** Per cluster: XRANGE from the position, the last entry, the lease. */
const quiet: Reply[] = [
  ok([entry("5-0", "service", "shop/web")]),
  ok([entry("5-0", "service", "shop/web")]),
  ok(1),
  ok([]),
  ok([]),
  ok(1),
];

const refreshCases: readonly {
  readonly name: string;
  readonly replies: readonly Reply[];
  readonly changed: string | undefined;
  readonly east: string;
}[] = [
  {
    name: "nothing new in any stream and no lease flipped: nothing to read",
    replies: [...discovery(["east", "west"]), ...quiet],
    changed: undefined,
    east: "5-0",
  },
  {
    name: "an entry after the position: the held hosts are read again from the new last entry",
    replies: [
      ...discovery(["east", "west"]),
      ok([entry("5-0", "service", "shop/web"), entry("6-0", "route", "r")]),
      ok([entry("9-0", "route", "r")]),
      ok(1),
      ...quiet.slice(3),
    ],
    changed: "cluster east changed",
    east: "9-0",
  },
  {
    name: "the position trimmed away: read again",
    replies: [
      ...discovery(["east", "west"]),
      ok([entry("7-0", "route", "r")]),
      ok([entry("7-0", "route", "r")]),
      ok(1),
      ...quiet.slice(3),
    ],
    changed: "cluster east changed",
    east: "7-0",
  },
  {
    name: "a lease ran out: read again (the views turn stale)",
    replies: [...discovery(["east", "west"]), ...quiet.slice(0, 2), ok(0), ...quiet.slice(3)],
    changed: "cluster east lease changed",
    east: "5-0",
  },
  {
    name: "a cluster not known before: read again",
    replies: [...discovery(["east", "north", "west"]), ...quiet],
    changed: "cluster north discovered",
    east: "5-0",
  },
  {
    name: "a key Redis cannot read: read again, keeping the position",
    replies: [...discovery(["east", "west"]), replyError("WRONGTYPE"), ...quiet.slice(1)],
    changed: "cluster east unreadable: WRONGTYPE",
    east: "5-0",
  },
];

describe("host mode of a Workers isolate", () => {
  it("refreshes in one pipeline: discovery, then per held cluster its stream after the position, last entry and lease", () => {
    const commands = hostRefreshCommands(PREFIX, held);
    expect(commands.map(([name]) => name)).toEqual([
      "smembers",
      "scan",
      "xrange",
      "xrevrange",
      "exists",
      "xrange",
      "xrevrange",
      "exists",
    ]);
    expect(commands[2]?.slice(2)).toEqual(["5-0", "+", "COUNT", "2"]);
  });

  for (const testCase of refreshCases) {
    it(testCase.name, () => {
      const outcome = readHostRefresh(PREFIX, held, testCase.replies, warningsWithLog().warnings);
      expect(outcome.changed).toBe(testCase.changed);
      expect(outcome.state.positions.get("east")?.lastChangeId).toBe(testCase.east);
    });
  }

  it("sums Redis' estimate of every cluster's hashes and keeps each stream's position, an estimate it refused as none", () => {
    expect(sizeCommands(PREFIX, ["east"]).map((command) => command.slice(0, 2))).toEqual([
      ["xrevrange", "t:{east}:changes"],
      ["exists", "t:{east}:lease"],
      ["memory", "usage"],
      ["memory", "usage"],
    ]);
    const sizes = readSizes(
      ["east", "west"],
      [
        ok([entry("3-0", "route", "r")]),
        ok(1),
        ok(1000),
        ok(500),
        ok([]),
        ok(0),
        replyError("NOPERM"),
        ok(20),
      ],
    );
    expect(sizes.bytes).toBe(1520);
    expect(sizes.positions.get("east")).toEqual({ lastChangeId: "3-0", stale: false });
    expect(sizes.positions.get("west")).toEqual({ lastChangeId: "0-0", stale: true });
  });

  it("merges the held hosts' views per cluster, sorted by name", () => {
    const web = serviceV2("east", "shop/web", "10.0.0.1");
    const api = serviceV2("east", "shop/api", "10.0.0.2");
    const other = serviceV2("west", "shop/other", "10.0.0.3");
    const merged = mergeHostViews([
      [clusterState("west", [other], "1-0").view, clusterState("east", [web], "1-0").view],
      [clusterState("east", [api], "1-0").view],
    ]);
    expect(merged.map((view) => view.name)).toEqual(["east", "west"]);
    expect([...(merged[0]?.servicesV2.keys() ?? [])].sort()).toEqual(["shop/api", "shop/web"]);
    expect([...(merged[0]?.routes.keys() ?? [])].sort()).toEqual([web.route.id, api.route.id].sort());
    expect(merged[1]?.servicesV2.get("shop/other")).toEqual(other.record);
  });
});
