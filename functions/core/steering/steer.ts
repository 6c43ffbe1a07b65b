import type { ClusterPlace, GeoPoint } from "../../../store/places.js";
import type { Selection, SteeringPlan, Tier } from "../selection/selection.js";
import { type ClusterFacts, decideSteering, STEERING_REASONS, type SteeringDecision } from "./decide.js";
import { greatCircleKm } from "./geo.js";
import type { SteeringMetrics } from "./metrics.js";
import { type ClientLocation, type SteeringOrigin, steeringOrigin } from "./origin.js";
import type { SteeringSettings } from "./settings.js";

/** What one request's steering reads besides the plan: where it comes from, where clusters are, the draws. */
export interface SteeringContext {
  /** Workers: from `request.cf`; Node: undefined (the router's location stands in). */
  readonly client: ClientLocation | undefined;
  /** ROUTER_LOCATION. */
  readonly routerLocation: GeoPoint | undefined;
  /** Each cluster's place from its heartbeat record (the source's heartbeats()). */
  readonly places: ReadonlyMap<string, ClusterPlace> | undefined;
  readonly settings: SteeringSettings;
  readonly random: () => number;
  readonly metrics: SteeringMetrics;
}

/** The facts a decision weighs for each cluster of the plan, now. */
export function clusterFacts(
  plan: SteeringPlan,
  origin: SteeringOrigin | undefined,
  places: ReadonlyMap<string, ClusterPlace> | undefined,
  now: number,
): ClusterFacts[] {
  return plan.clusters.map((cluster) => {
    const location = places?.get(cluster.name)?.location;
    return {
      name: cluster.name,
      local: cluster.local,
      weight: cluster.weight,
      distanceKm: origin && location ? greatCircleKm(origin.point, location) : undefined,
      ewmaMs: cluster.track.ewmaMs,
      health: cluster.track.state(now),
    };
  });
}

/**
 * The selection one request of a steered Service uses: the plan's clusters in the decision's order, then the
 * terminating endpoints. Selections are memoised per plan by order and reason (a handful while health and
 * rankings hold still), so the retry loop, metrics and ejection see the same objects request after request.
 */
export function steerSelection(
  selection: Selection,
  plan: SteeringPlan,
  context: SteeringContext,
): Selection {
  const now = plan.clusters[0]?.track.now() ?? 0;
  const origin =
    plan.policy === "proximity" ? steeringOrigin(context.client, context.routerLocation) : undefined;
  const facts = clusterFacts(plan, origin, context.places, now);
  const decision = decideSteering(facts, plan.policy, context.settings, context.random);
  const steered = variantOf(selection, plan, decision, context.metrics);
  steered.steered?.counter.inc();
  return steered;
}

/** Orders of more clusters than this are not memoised (their key would pass 2^53). */
const MEMOISED_CLUSTERS = 12;
/** Variants kept per plan at most. */
const MAX_VARIANTS = 256;

function variantOf(
  selection: Selection,
  plan: SteeringPlan,
  decision: SteeringDecision,
  metrics: SteeringMetrics,
): Selection {
  const key = variantKey(decision, plan.clusters.length);
  const known = key === undefined ? undefined : plan.variants.get(key);
  if (known) return known;
  const tiers: Tier[] = [];
  for (const index of decision.order) for (const tier of plan.clusters[index]?.tiers ?? []) tiers.push(tier);
  if (plan.fallback) tiers.push(plan.fallback);
  const cluster = plan.clusters[decision.order[0] ?? 0]?.name ?? "";
  const variant: Selection = {
    ...selection,
    tiers,
    steered: {
      cluster,
      reason: decision.reason,
      counter: metrics.decision(selection.service, plan.policy, cluster, decision.reason),
    },
  };
  if (key !== undefined && plan.variants.size < MAX_VARIANTS) plan.variants.set(key, variant);
  return variant;
}

/** The reason and the order as one number: digits in base n + 1, the reason below them. */
function variantKey(decision: SteeringDecision, clusters: number): number | undefined {
  if (clusters > MEMOISED_CLUSTERS) return undefined;
  let key = 0;
  for (const index of decision.order) key = key * (clusters + 1) + index + 1;
  return key * STEERING_REASONS.length + STEERING_REASONS.indexOf(decision.reason);
}
