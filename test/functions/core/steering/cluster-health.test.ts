import { describe, expect, it } from "vitest";
import {
  ClusterHealth,
  type ClusterHealthOptions,
  DEFAULT_CLUSTER_HEALTH,
  type HealthState,
} from "../../../../functions/core/steering/cluster-health.js";

/** An outcome at a time (ms): "ok", "fail", or a look at the state. */
type Step = readonly [number, "ok" | "fail" | HealthState];

const OPTIONS: ClusterHealthOptions = {
  ...DEFAULT_CLUSTER_HEALTH,
  consecutiveFailures: 5,
  failureRatio: 0.5,
  minAttempts: 10,
  windowMs: 5_000,
  buckets: 5,
  baseMs: 2_000,
  maxMs: 8_000,
  recoverAfter: 3,
};

const repeat = (times: number, from: number, every: number, outcome: "ok" | "fail"): Step[] =>
  Array.from({ length: times }, (_, i) => [from + i * every, outcome] as const);

/** Runs the steps, checking each expected state when it comes; returns when each outcome stepped it over. */
function run(steps: readonly Step[], options = OPTIONS): number[] {
  const health = new ClusterHealth(options);
  const trips: number[] = [];
  for (const [at, step] of steps) {
    if (step === "ok" || step === "fail") {
      if (health.record(at, step === "fail")) trips.push(at);
    } else expect(health.state(at), `state at ${at} ms`).toBe(step);
  }
  return trips;
}

describe("cluster health", () => {
  it.each<[string, Step[], number[]]>([
    ["stays healthy while attempts succeed", [...repeat(100, 0, 10, "ok"), [1_000, "healthy"]], []],
    [
      "steps over after five failures in a row however long it succeeded before",
      [...repeat(1_000, 0, 1, "ok"), ...repeat(5, 1_000, 1, "fail"), [1_005, "stepped-over"]],
      [1_004],
    ],
    [
      "does not step over four failures in a row between successes",
      [...repeat(4, 0, 1, "fail"), [4, "ok"], ...repeat(4, 5, 1, "fail"), [10, "healthy"]],
      [],
    ],
    [
      "steps over when half of ten attempts in the window failed, alternating",
      Array.from({ length: 10 }, (_, i) => [i * 100, i % 2 === 0 ? "ok" : "fail"] as const),
      [900],
    ],
    [
      "needs ten attempts in the window before the ratio counts",
      [
        ...Array.from({ length: 8 }, (_, i) => [i * 100, i % 2 === 0 ? "fail" : "ok"] as const),
        [900, "healthy"],
      ],
      [],
    ],
    [
      "forgets failures older than the window",
      [
        ...Array.from({ length: 8 }, (_, i) => [i * 10, i % 2 === 0 ? "fail" : "ok"] as const),
        // Five seconds later those buckets are gone: two more failures out of four are no trip.
        [6_000, "fail"],
        [6_001, "ok"],
        [6_002, "fail"],
        [6_003, "ok"],
        [6_004, "healthy"],
      ],
      [],
    ],
    [
      "probes after the step-over and recovers after three successes in a row",
      [
        ...repeat(5, 0, 1, "fail"),
        [1_999, "stepped-over"],
        [2_004, "recovering"],
        ...repeat(3, 2_010, 1, "ok"),
        [2_013, "healthy"],
      ],
      [4],
    ],
    [
      "doubles the step-over when a probe fails, up to the cap",
      [
        ...repeat(5, 0, 1, "fail"),
        [2_010, "fail"], // recovering: stepped over again, for 4 s
        [6_009, "stepped-over"],
        [6_010, "recovering"],
        [6_011, "fail"], // 8 s (the cap)
        [14_010, "stepped-over"],
        [14_011, "recovering"],
        [14_012, "fail"], // still 8 s
        [22_011, "stepped-over"],
        [22_012, "recovering"],
      ],
      [4, 2_010, 6_011, 14_012],
    ],
    [
      "ignores the outcomes of attempts sent before it was stepped over",
      [...repeat(5, 0, 1, "fail"), ...repeat(20, 10, 1, "fail"), [2_004, "recovering"]],
      [4],
    ],
    [
      "starts over from two seconds once it recovered",
      [
        ...repeat(5, 0, 1, "fail"),
        [2_010, "fail"],
        ...repeat(3, 6_100, 1, "ok"),
        [6_200, "healthy"],
        ...repeat(5, 7_000, 1, "fail"),
        [9_003, "stepped-over"],
        [9_004, "recovering"],
      ],
      [4, 2_010, 7_004],
    ],
  ])("%s", (_name, steps, trips) => {
    expect(run(steps)).toEqual(trips);
  });

  it("shows the window's attempts and failures and how long it stays stepped over", () => {
    const health = new ClusterHealth(OPTIONS);
    health.record(0, false);
    health.record(1, true);
    expect(health.view(2)).toEqual({
      state: "healthy",
      attempts: 2,
      failures: 1,
      consecutiveFailures: 1,
      steppedOverForMs: 0,
      trips: 0,
    });
    for (let at = 2; at < 6; at++) health.record(at, true);
    expect(health.view(1_005)).toMatchObject({ state: "stepped-over", steppedOverForMs: 1_000, trips: 1 });
  });
});
