import { type ServiceSteering, type SteeringPolicy, steeringKey } from "../../../store/steering.js";
import type {
  Backend,
  BackendCandidate,
  Selection,
  SteeredCluster,
  SteeringPlan,
  SteeringSource,
  Tier,
} from "../selection/selection.js";
import type { SteeringState } from "./cluster-track.js";

/** What createSelector passes: the router's CLUSTER_STEERING and the state the tracks live in. */
export interface SelectSteering {
  readonly policy: SteeringPolicy;
  readonly state: SteeringState;
}

/**
 * The Service's steering: what every cluster publishing it says (all the same, absent included), else the
 * router's default. A cluster alone cannot change how traffic is split between it and the others.
 */
export function resolveSteering(
  candidates: readonly BackendCandidate[],
  routerPolicy: SteeringPolicy,
): { readonly steering: ServiceSteering; readonly source: SteeringSource } {
  const keys = new Map<string, string>();
  for (const candidate of candidates) keys.set(candidate.cluster, steeringKey(candidate.steering));
  const distinct = new Set(keys.values());
  const agreed = candidates[0]?.steering;
  if (distinct.size <= 1 && agreed) return { steering: agreed, source: { from: "annotation" } };
  if (distinct.size <= 1) return { steering: { policy: routerPolicy }, source: { from: "router" } };
  const disagreement = [...keys].map(([cluster, steering]) => ({ cluster, steering: steering || "(none)" }));
  return { steering: { policy: routerPolicy }, source: { from: "router", disagreement } };
}

/**
 * The steering plan of a selection built by selectTiers, or undefined when there is nothing to steer (the
 * policy is local-first, or fewer than two clusters have ready endpoints): then requests use its tiers as they
 * are and nothing per request changes. The plan regroups the selection's ready tiers by cluster (zone hints,
 * family choice and de-duplication stay selectTiers'), each backend carrying its cluster's track.
 */
export function steeringPlan(
  selection: Selection,
  candidates: readonly BackendCandidate[],
  steering: SelectSteering,
): SteeringPlan | undefined {
  const { steering: service, source } = resolveSteering(candidates, steering.policy);
  if (service.policy === "local-first") return undefined;
  const grouped = new Map<string, Tier[]>();
  let fallback: Tier | undefined;
  for (const tier of selection.tiers) {
    if (tier.name === "fallback") {
      fallback = tier;
      continue;
    }
    for (const backend of tier.backends) {
      let tiers = grouped.get(backend.cluster);
      if (!tiers) {
        tiers = [];
        grouped.set(backend.cluster, tiers);
      }
      let own = tiers.find((candidate) => candidate.name === tier.name);
      if (!own) {
        own = { name: tier.name, backends: [] };
        tiers.push(own);
      }
      const track = steering.state.track(backend.cluster);
      (own.backends as Backend[]).push({ ...backend, track });
    }
  }
  if (grouped.size < 2) return undefined;
  const weights = service.policy === "weighted" ? service.weights : undefined;
  const clusters: SteeredCluster[] = [];
  for (const choice of selection.clusters) {
    const tiers = grouped.get(choice.cluster);
    if (!tiers) continue;
    const weight = weights ? (weights.find((entry) => entry.cluster === choice.cluster)?.weight ?? 0) : 1;
    clusters.push({
      name: choice.cluster,
      local: choice.local,
      weight,
      tiers,
      track: steering.state.track(choice.cluster),
    });
  }
  return { policy: service.policy, source, clusters, fallback, variants: new Map() };
}
