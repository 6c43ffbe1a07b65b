import { describe, expect, it } from "vitest";
import {
  adoptRead,
  type ClusterState,
  heartbeatsOf,
  lostCluster,
  observeCluster,
  viewsOf,
  withRecords,
} from "../../store/cluster-state.js";
import type { ClusterHeartbeat } from "../../store/store.js";
import { clusterView, NO_RECORDS, updatedRecords } from "../../store/stored-records.js";
import { serviceV2 } from "../functions/workers/delta-fixtures.js";

/** The decisions both store readers (Node's store/redis, the Workers' delta reader) make about one cluster. */

function state(
  name: string,
  flags: { stale?: boolean; registered?: boolean; at?: string } = {},
): ClusterState {
  return {
    view: clusterView(name, flags.stale ?? false, NO_RECORDS),
    records: NO_RECORDS,
    lastChangeId: flags.at ?? "1-0",
    registered: flags.registered ?? true,
  };
}

const BEAT: ClusterHeartbeat = { holder: "sync-a", at: 1 };

describe("a cluster read whole", () => {
  it.each([
    {
      when: "its heartbeat key is there: the read is the state",
      read: state("east", { at: "9-0" }),
      previous: state("east", { stale: true, registered: false }),
      expected: state("east", { at: "9-0" }),
    },
    {
      when: "its heartbeat key is missing and nothing was known: nothing",
      read: state("east", { registered: false, at: "9-0" }),
      previous: undefined,
      expected: undefined,
    },
    {
      when: "its heartbeat key is missing: the last records kept, stale, at the position read",
      read: state("east", { registered: false, at: "9-0" }),
      previous: state("east"),
      expected: state("east", { stale: true, registered: false, at: "9-0" }),
    },
  ])("$when", ({ read, previous, expected }) => {
    expect(adoptRead(read, previous)).toEqual(expected);
  });
});

describe("a look at a known cluster's heartbeat and lease keys", () => {
  it.each([
    {
      when: "both there, was fresh",
      before: {},
      seen: [true, true],
      kind: "seen",
      after: {},
      changed: false,
    },
    {
      when: "lease gone: stale",
      before: {},
      seen: [true, false],
      kind: "seen",
      after: { stale: true },
      changed: true,
    },
    {
      when: "lease back: fresh again",
      before: { stale: true },
      seen: [true, true],
      kind: "seen",
      after: {},
      changed: true,
    },
    {
      when: "heartbeat gone: lost, stale and unregistered",
      before: {},
      seen: [false, true],
      kind: "lost",
      after: { stale: true, registered: false },
      changed: true,
    },
    {
      when: "heartbeat still gone: nothing changes",
      before: { stale: true, registered: false },
      seen: [false, false],
      kind: "lost",
      after: { stale: true, registered: false },
      changed: false,
    },
    {
      when: "heartbeat back after it was lost: read whole again, kept as it was meanwhile",
      before: { stale: true, registered: false },
      seen: [true, true],
      kind: "regained",
      after: { stale: true, registered: false },
      changed: false,
    },
  ] as const)("$when", ({ before, seen: [heartbeat, lease], kind, after, changed }) => {
    const observed = observeCluster(state("east", before), { heartbeat, lease });
    expect(observed).toEqual({ kind, state: state("east", after), changed });
  });

  it("keeps the very view when nothing it shows changed, so no snapshot is built for it", () => {
    const stale = state("east", { stale: true, registered: false });
    expect(observeCluster(stale, { heartbeat: false, lease: false }).state.view).toBe(stale.view);
    const fresh = state("east");
    expect(observeCluster(fresh, { heartbeat: true, lease: true }).state).toBe(fresh);
  });
});

describe("a lost cluster", () => {
  it("keeps its position unless the read that lost it found another", () => {
    expect(lostCluster(state("east", { at: "3-0" })).lastChangeId).toBe("3-0");
    expect(lostCluster(state("east", { at: "3-0" }), "4-0").lastChangeId).toBe("4-0");
  });
});

describe("a change batch applied", () => {
  it("builds the view again from the new records, at the batch's last entry, keeping the stale flag", () => {
    const before = state("east", { stale: true });
    const { route } = serviceV2("east", "default/web", "10.0.0.1");
    const records = updatedRecords(before.records, new Map(), new Map([[route.id, route]]));
    const after = withRecords(before, records, "7-0");
    expect(after).toEqual({
      ...before,
      records,
      lastChangeId: "7-0",
      view: clusterView("east", true, records),
    });
    expect(after.view.routes.get(route.id)).toEqual(route);
  });

  it("carries the budget report the Node reader gives", () => {
    const budget = { bytes: 10, records: 1, refused: [], refusedCount: 0 };
    expect(withRecords(state("east"), NO_RECORDS, "2-0", budget).view.budget).toEqual(budget);
  });
});

describe("what a reader serves of its clusters", () => {
  it("lists the views sorted by name in code units, and the heartbeats it kept", () => {
    const clusters = new Map<string, ClusterState>([
      ["west", { ...state("west"), heartbeat: BEAT }],
      ["East", state("East")],
      ["east", state("east")],
    ]);
    expect(viewsOf(clusters).map((view) => view.name)).toEqual(["East", "east", "west"]);
    expect(heartbeatsOf(clusters)).toEqual(new Map([["west", BEAT]]));
  });
});
