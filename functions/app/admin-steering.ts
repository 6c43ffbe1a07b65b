import type { ClusterPlace } from "../../store/places.js";
import type { SteeringPlan } from "../core/selection/selection.js";
import { type ClusterFacts, decideSteering, expectedShares } from "../core/steering/decide.js";
import { type ClientLocation, steeringOrigin } from "../core/steering/origin.js";
import type { RoutingSteering } from "../core/steering/routing-steering.js";
import { clusterFacts } from "../core/steering/steer.js";

/**
 * What explain says of a steered Service: each cluster's place, distance, latency EWMA, health and expected
 * share, and which cluster a typical request goes to first and why. "Typical": the draws a request makes are
 * taken at their middle (no probe; the middle of the tolerance set or of the weights), so the answer is stable.
 */
export interface SteeringExplainInput {
  readonly plan: SteeringPlan;
  readonly steering: RoutingSteering;
  /** The source's heartbeat records: each cluster's region and location. */
  readonly places: ReadonlyMap<string, ClusterPlace> | undefined;
  /** explain's `client=lat,long` (and `continent=`): where the request would come from. */
  readonly client: ClientLocation | undefined;
}

export function explainSteering(input: SteeringExplainInput) {
  const { plan, steering, places } = input;
  const state = steering.state;
  const now = state.now();
  const origin =
    plan.policy === "proximity" ? steeringOrigin(input.client, steering.routerLocation) : undefined;
  const facts = clusterFacts(plan, origin, places, now);
  const decision = decideSteering(facts, plan.policy, state.settings, () => 0.5);
  const shares = expectedShares(facts, plan.policy, state.settings);
  const clusters = plan.clusters.map((cluster, index) => {
    const fact = facts[index] as ClusterFacts;
    const health = cluster.track.health(now);
    const place = places?.get(cluster.name);
    return {
      cluster: cluster.name,
      local: cluster.local,
      region: place?.region ?? null,
      location: place?.location ?? null,
      distanceKm: fact.distanceKm === undefined ? null : round(fact.distanceKm),
      ewmaMs: fact.ewmaMs === undefined ? null : round(fact.ewmaMs),
      samples: cluster.track.samples,
      ...health,
      ...(plan.policy === "weighted" ? { weight: cluster.weight } : {}),
      share: round((shares[index] ?? 0) * 100) / 100,
    };
  });
  const chosen = plan.clusters[decision.order[0] ?? 0]?.name ?? "";
  const order = decision.order.map((index) => plan.clusters[index]?.name ?? "");
  const source =
    plan.source.from === "annotation"
      ? "the Service's edgeslice.io/cluster-steering"
      : "disagreement" in plan.source
        ? "CLUSTER_STEERING: the clusters annotate the Service differently"
        : "CLUSTER_STEERING";
  const why = [
    `steering ${plan.policy} (${source}): ${chosen} first (${decision.reason}), then ${order.slice(1).join(", ")}`,
    ...clusters.map((c) => {
      const parts = [
        c.distanceKm === null ? undefined : `${c.distanceKm} km`,
        c.ewmaMs === null ? undefined : `EWMA ${c.ewmaMs} ms`,
        c.state === "healthy" ? undefined : `${c.state} (${c.failures} of ${c.attempts} failed)`,
        `${round(c.share * 100)}% first`,
      ].filter((part) => part !== undefined);
      return `${c.cluster}: ${parts.join(", ")}`;
    }),
  ];
  return {
    steering: {
      policy: plan.policy,
      source: plan.source,
      origin: origin ? { from: origin.from, ...origin.point } : null,
      chosen,
      reason: decision.reason,
      order,
      clusters,
    },
    why,
  };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
