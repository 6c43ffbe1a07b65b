import { describe, expect, it } from "vitest";
import type { BackendCandidate } from "../../../../functions/core/selection/selection.js";
import { selectTiers } from "../../../../functions/core/selection/selector.js";
import { SteeringState } from "../../../../functions/core/steering/cluster-track.js";
import { resolveSteering, steeringPlan } from "../../../../functions/core/steering/plan.js";
import { DEFAULT_STEERING } from "../../../../functions/core/steering/settings.js";
import type { ServiceSteering } from "../../../../store/steering.js";
import { ep, serviceRecord } from "../../fixtures.js";

function candidate(
  cluster: string,
  steering: ServiceSteering | undefined,
  options: { ips?: string[]; fallback?: boolean; zones?: string[] } = {},
): BackendCandidate {
  const record = serviceRecord({
    cluster,
    ipv4: (options.ips ?? [`10.${cluster.length}.0.1`]).map((ip) =>
      ep(ip, 8080, options.zones ? { forZones: options.zones } : {}),
    ),
    ipv4Fallback: options.fallback ?? false,
  });
  return { cluster, stale: false, service: "shop/web", backends: record, steering };
}

const WEIGHTED: ServiceSteering = {
  policy: "weighted",
  weights: [
    { cluster: "east", weight: 90 },
    { cluster: "west", weight: 10 },
  ],
};

describe("which steering a Service gets", () => {
  it.each<[string, (ServiceSteering | undefined)[], string, string]>([
    ["every cluster's annotation, when they agree", [WEIGHTED, WEIGHTED], "weighted", "annotation"],
    ["the router's default when none annotates", [undefined, undefined], "latency", "router"],
    ["the router's default when one annotates and another not", [WEIGHTED, undefined], "latency", "router"],
    [
      "the router's default when they annotate differently",
      [{ policy: "proximity" }, { policy: "latency" }],
      "latency",
      "router",
    ],
  ])("%s", (_name, steerings, policy, from) => {
    const candidates = steerings.map((steering, i) => candidate(["east", "west"][i] ?? "x", steering));
    const resolved = resolveSteering(candidates, "latency");
    expect(resolved.steering.policy).toBe(policy);
    expect(resolved.source.from).toBe(from);
  });

  it("names each cluster's annotation when they disagree", () => {
    const resolved = resolveSteering(
      [candidate("east", { policy: "proximity" }), candidate("west", undefined)],
      "local-first",
    );
    expect(resolved.source).toEqual({
      from: "router",
      disagreement: [
        { cluster: "east", steering: '{"policy":"proximity"}' },
        { cluster: "west", steering: "(none)" },
      ],
    });
  });
});

describe("the steering plan of a selection", () => {
  const state = new SteeringState(() => 0, DEFAULT_STEERING);
  const plan = (candidates: BackendCandidate[], cluster?: string, zone?: string) => {
    const selection = selectTiers("shop/web", candidates, { ipFamily: "PreferIPv4", cluster, zone });
    return steeringPlan(selection, candidates, { policy: "local-first", state });
  };

  it("is none for local-first, or with fewer than two clusters with ready endpoints", () => {
    expect(plan([candidate("east", undefined), candidate("west", undefined)])).toBeUndefined();
    expect(plan([candidate("east", WEIGHTED)])).toBeUndefined();
    expect(
      plan([candidate("east", WEIGHTED), candidate("west", WEIGHTED, { fallback: true })]),
    ).toBeUndefined();
  });

  it("groups the ready backends by cluster with their weights, terminating ones in a fallback tier", () => {
    const steered = plan([
      candidate("east", WEIGHTED, { ips: ["10.0.0.1", "10.0.0.2"] }),
      candidate("north", WEIGHTED, { ips: ["10.2.0.1"], fallback: true }),
      candidate("west", WEIGHTED, { ips: ["10.1.0.1"] }),
    ]);
    expect(
      steered?.clusters.map((c) => [c.name, c.weight, c.tiers.flatMap((t) => t.backends.map((b) => b.ip))]),
    ).toEqual([
      ["east", 90, ["10.0.0.1", "10.0.0.2"]],
      ["west", 10, ["10.1.0.1"]],
    ]);
    expect(steered?.fallback?.backends.map((b) => b.ip)).toEqual(["10.2.0.1"]);
    expect(steered?.clusters[0]?.tiers[0]?.backends[0]?.track).toBe(state.track("east"));
  });

  it("keeps the router's own zone tier first within its cluster", () => {
    const steered = plan(
      [
        candidate("east", { policy: "latency" }, { ips: ["10.0.0.1", "10.0.0.2"], zones: ["z1"] }),
        candidate("west", { policy: "latency" }),
      ],
      "east",
      "z1",
    );
    expect(steered?.clusters[0]?.tiers.map((t) => t.name)).toEqual(["local-zone"]);
    expect(steered?.clusters[0]?.local).toBe(true);
  });
});
