import { describe, expect, it } from "vitest";
import type { HealthState } from "../../../../functions/core/steering/cluster-health.js";
import {
  type ClusterFacts,
  decideSteering,
  expectedShares,
  type SteeredPolicy,
  type SteeringReason,
} from "../../../../functions/core/steering/decide.js";
import { DEFAULT_STEERING } from "../../../../functions/core/steering/settings.js";
import { binomialBound, seededRandom } from "../../statistics.js";

const TUNING = DEFAULT_STEERING;
/** A draw above the probe share and at the middle of any pick: the typical request. */
const MIDDLE = () => 0.5;

function cluster(name: string, facts: Partial<Omit<ClusterFacts, "name">> = {}): ClusterFacts {
  return {
    name,
    local: false,
    weight: 1,
    distanceKm: undefined,
    ewmaMs: undefined,
    health: "healthy",
    ...facts,
  };
}

const state = (health: HealthState) => ({ health });

/** The cluster names of a decision's order. */
function order(facts: readonly ClusterFacts[], policy: SteeredPolicy, random = MIDDLE) {
  const decision = decideSteering(facts, policy, TUNING, random);
  return { order: decision.order.map((i) => facts[i]?.name), reason: decision.reason };
}

describe("proximity steering", () => {
  it.each<[string, ClusterFacts[], string[], SteeringReason]>([
    [
      "sends to the nearest cluster, then the next nearest",
      [
        cluster("east", { distanceKm: 6_000 }),
        cluster("fra", { distanceKm: 30 }),
        cluster("west", { distanceKm: 8_300 }),
      ],
      ["fra", "east", "west"],
      "nearest",
    ],
    [
      "fails over to the next nearest when the nearest is stepped over, keeping it as a last resort",
      [
        cluster("east", { distanceKm: 6_000 }),
        cluster("fra", { distanceKm: 30, ...state("stepped-over") }),
        cluster("west", { distanceKm: 8_300 }),
      ],
      ["east", "west", "fra"],
      "failover",
    ],
    [
      "puts clusters of unknown place after every placed one",
      [cluster("a"), cluster("z", { distanceKm: 9_000 })],
      ["z", "a"],
      "nearest",
    ],
    [
      "without any place known takes the local cluster, then the names in order",
      [cluster("b"), cluster("c", { local: true }), cluster("a")],
      ["c", "a", "b"],
      "no-location",
    ],
    [
      "breaks a tie of distance by the local cluster, then by name",
      [
        cluster("b", { distanceKm: 10 }),
        cluster("a", { distanceKm: 10 }),
        cluster("c", { distanceKm: 10, local: true }),
      ],
      ["c", "a", "b"],
      "nearest",
    ],
    [
      "keeps the policy's order when every cluster is unhealthy",
      [
        cluster("far", { distanceKm: 900, ...state("stepped-over") }),
        cluster("near", { distanceKm: 9, ...state("stepped-over") }),
      ],
      ["near", "far"],
      "all-unhealthy",
    ],
  ])("%s", (_name, facts, expected, reason) => {
    expect(order(facts, "proximity")).toEqual({ order: expected, reason });
  });

  it("probes a recovering cluster with the probe share of requests and no more", () => {
    const facts = [
      cluster("near", { distanceKm: 9, ...state("recovering") }),
      cluster("far", { distanceKm: 900 }),
    ];
    expect(order(facts, "proximity")).toEqual({ order: ["far", "near"], reason: "failover" });
    expect(order(facts, "proximity", () => 0.01)).toEqual({ order: ["near", "far"], reason: "probe" });
    expect(expectedShares(facts, "proximity", TUNING)).toEqual([0.05, 0.95]);
  });
});

describe("latency steering", () => {
  it.each<[string, ClusterFacts[], () => number, string[], SteeringReason]>([
    [
      "sends to the cluster with the lowest EWMA, then by EWMA",
      [cluster("slow", { ewmaMs: 80 }), cluster("fast", { ewmaMs: 5 }), cluster("mid", { ewmaMs: 20 })],
      MIDDLE,
      ["fast", "mid", "slow"],
      "fastest",
    ],
    [
      "shares the traffic among clusters within 20% + 2 ms of the fastest (here the second of two)",
      [cluster("a", { ewmaMs: 10 }), cluster("b", { ewmaMs: 13.9 }), cluster("c", { ewmaMs: 14.1 })],
      MIDDLE,
      ["b", "a", "c"],
      "fastest",
    ],
    [
      "spreads requests over every cluster while none has answered yet",
      [cluster("a"), cluster("b"), cluster("c")],
      () => 0.99,
      ["c", "a", "b"],
      "measuring",
    ],
    [
      "probes a slower cluster with the probe share",
      [cluster("fast", { ewmaMs: 5 }), cluster("slow", { ewmaMs: 80 })],
      () => 0.01,
      ["slow", "fast"],
      "probe",
    ],
    [
      "probes a cluster not measured yet once the others are",
      [cluster("fast", { ewmaMs: 5 }), cluster("new")],
      () => 0.01,
      ["new", "fast"],
      "probe",
    ],
    [
      "fails over to the next fastest when the fastest is stepped over",
      [
        cluster("fast", { ewmaMs: 2, ...state("stepped-over") }),
        cluster("mid", { ewmaMs: 20 }),
        cluster("slow", { ewmaMs: 80 }),
      ],
      MIDDLE,
      ["mid", "slow", "fast"],
      "failover",
    ],
  ])("%s", (_name, facts, random, expected, reason) => {
    expect(order(facts, "latency", random)).toEqual({ order: expected, reason });
  });

  it("gives the fastest cluster all but the probe share, split evenly among the slower ones", () => {
    const facts = [cluster("a", { ewmaMs: 5 }), cluster("b", { ewmaMs: 20 }), cluster("c", { ewmaMs: 80 })];
    expect(expectedShares(facts, "latency", TUNING)).toEqual([0.95, 0.025, 0.025]);
  });
});

describe("weighted steering", () => {
  it.each<[string, ClusterFacts[], string[], SteeringReason]>([
    [
      "draws by weight, then orders the rest by weight, weight 0 last",
      [cluster("east", { weight: 90 }), cluster("spare", { weight: 0 }), cluster("west", { weight: 10 })],
      ["east", "west", "spare"],
      "weight",
    ],
    [
      "sends to a weight-0 cluster only when no weighted one can serve",
      [cluster("east", { weight: 90, ...state("stepped-over") }), cluster("spare", { weight: 0 })],
      ["spare", "east"],
      "failover",
    ],
  ])("%s", (_name, facts, expected, reason) => {
    expect(order(facts, "weighted")).toEqual({ order: expected, reason });
  });

  it("gives each healthy cluster its weight's share, a stepped-over one's share going to the others", () => {
    const facts = [
      cluster("a", { weight: 60 }),
      cluster("b", { weight: 30, ...state("stepped-over") }),
      cluster("c", { weight: 10 }),
    ];
    const [a, b, c] = expectedShares(facts, "weighted", TUNING);
    expect(a).toBeCloseTo(60 / 70, 12);
    expect(b).toBe(0);
    expect(c).toBeCloseTo(10 / 70, 12);
  });

  it.each([
    [[90, 10], 0],
    [[90, 10], 1],
    [[50, 30, 20], 2],
  ])("splits %j: the share drawn first stays within an exact binomial bound (seed %i)", (weights, seed) => {
    const facts = weights.map((weight, i) => cluster(`c${i}`, { weight }));
    const n = 20_000;
    const random = seededRandom(seed);
    const counts = facts.map(() => 0);
    for (let i = 0; i < n; i++) {
      const first = decideSteering(facts, "weighted", TUNING, random).order[0] as number;
      counts[first] = (counts[first] ?? 0) + 1;
    }
    const total = weights.reduce((a, b) => a + b, 0);
    weights.forEach((weight, i) => {
      const p = weight / total;
      // A fair draw leaves n·p ± d all but one time in a million.
      const d = binomialBound(n, p, 1e-6);
      expect(
        Math.abs((counts[i] ?? 0) - n * p),
        `c${i}: ${counts[i]} of ${n}, p = ${p}, d = ${d}`,
      ).toBeLessThan(d);
    });
  });
});

describe("probe shares across policies", () => {
  it("holds a latency policy's draws to its expected shares within an exact binomial bound", () => {
    const facts = [cluster("a", { ewmaMs: 5 }), cluster("b", { ewmaMs: 6 }), cluster("c", { ewmaMs: 80 })];
    const shares = expectedShares(facts, "latency", TUNING);
    expect(shares.map((s) => Math.round(s * 1000) / 1000)).toEqual([0.475, 0.475, 0.05]);
    const n = 20_000;
    const random = seededRandom(7);
    const counts = facts.map(() => 0);
    for (let i = 0; i < n; i++) {
      const first = decideSteering(facts, "latency", TUNING, random).order[0] as number;
      counts[first] = (counts[first] ?? 0) + 1;
    }
    shares.forEach((p, i) => {
      const d = binomialBound(n, p, 1e-6);
      expect(Math.abs((counts[i] ?? 0) - n * p)).toBeLessThan(d);
    });
  });
});
