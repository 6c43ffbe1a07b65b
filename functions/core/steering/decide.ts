import type { SteeringPolicy } from "../../../store/steering.js";
import type { HealthState } from "./cluster-health.js";
import type { SteeringSettings } from "./settings.js";

/** What the decision knows of one cluster that has ready endpoints for the request's Service. */
export interface ClusterFacts {
  readonly name: string;
  /** ROUTER_CLUSTER: wins ties. */
  readonly local: boolean;
  /** weighted: its share (0: only when no weighted cluster can serve). */
  readonly weight: number;
  /** proximity: km from the client (Workers) or the router; undefined when either place is unknown. */
  readonly distanceKm: number | undefined;
  /** latency: EWMA of its time to response head, ms; undefined before its first answer. */
  readonly ewmaMs: number | undefined;
  readonly health: HealthState;
}

/** Why the first cluster of an order was chosen: the `reason` label of edgeslice_steering_decisions_total. */
export const STEERING_REASONS = [
  "nearest",
  "no-location",
  "fastest",
  "measuring",
  "weight",
  "failover",
  "probe",
  "all-unhealthy",
] as const;
export type SteeringReason = (typeof STEERING_REASONS)[number];

export type SteeredPolicy = Exclude<SteeringPolicy, "local-first">;

export interface SteeringDecision {
  /** Indices into the facts: the chosen cluster first, then the order retries and failover take. */
  readonly order: readonly number[];
  readonly reason: SteeringReason;
}

type Tuning = Pick<SteeringSettings, "probeShare" | "toleranceRatio" | "toleranceMs">;

/**
 * Orders the clusters for one request. Healthy clusters come first in the policy's order, then the stepped-over
 * and recovering ones (a last resort, still in the policy's order):
 * - proximity: nearest first (unknown distances last), failing over to the next nearest;
 * - latency: a cluster chosen uniformly among those whose EWMA is within the tolerance of the fastest one, then
 *   the others by EWMA; before any answer, uniformly among the unmeasured;
 * - weighted: a cluster drawn in proportion to the weights of the healthy ones, then by weight.
 * With probability `probeShare` a request instead goes first to one probe candidate, drawn uniformly: a
 * recovering cluster (any policy) or, for latency, a healthy one outside the tolerance or not yet measured.
 * Ties go to the local cluster, then by name. `random` returns [0, 1); it is called only for a real choice.
 */
export function decideSteering(
  facts: readonly ClusterFacts[],
  policy: SteeredPolicy,
  tuning: Tuning,
  random: () => number,
): SteeringDecision {
  const ranked = rank(facts, policy);
  const usable = ranked.filter((i) => facts[i]?.health === "healthy");
  const others = ranked.filter((i) => facts[i]?.health !== "healthy");
  if (usable.length === 0) return { order: ranked, reason: "all-unhealthy" };
  const probes = probeCandidates(facts, policy, usable, others, tuning);
  if (probes.length > 0 && random() < tuning.probeShare) {
    const probe = probes[pickIndex(probes.length, random)] as number;
    return { order: withFirst(probe, [...usable, ...others]), reason: "probe" };
  }
  const { first, reason } = choose(facts, policy, ranked, usable, tuning, random);
  return { order: withFirst(first, [...usable, ...others]), reason };
}

/**
 * The share of requests each cluster gets first under these facts: what decideSteering's draws converge to
 * (explain prints it; the tests hold the draws to it).
 */
export function expectedShares(
  facts: readonly ClusterFacts[],
  policy: SteeredPolicy,
  tuning: Tuning,
): number[] {
  const shares = facts.map(() => 0);
  const ranked = rank(facts, policy);
  const usable = ranked.filter((i) => facts[i]?.health === "healthy");
  const others = ranked.filter((i) => facts[i]?.health !== "healthy");
  if (usable.length === 0) {
    shares[ranked[0] as number] = 1;
    return shares;
  }
  const probes = probeCandidates(facts, policy, usable, others, tuning);
  const probeShare = probes.length > 0 ? tuning.probeShare : 0;
  for (const probe of probes) shares[probe] = (shares[probe] ?? 0) + probeShare / probes.length;
  for (const [index, share] of mainShares(facts, policy, usable, tuning)) {
    shares[index] = (shares[index] ?? 0) + (1 - probeShare) * share;
  }
  return shares;
}

function choose(
  facts: readonly ClusterFacts[],
  policy: SteeredPolicy,
  ranked: readonly number[],
  usable: readonly number[],
  tuning: Tuning,
  random: () => number,
): { first: number; reason: SteeringReason } {
  const best = usable[0] as number;
  const topDown = ranked[0] !== best;
  if (policy === "proximity") {
    if (facts[best]?.distanceKm === undefined)
      return { first: best, reason: topDown ? "failover" : "no-location" };
    return { first: best, reason: topDown ? "failover" : "nearest" };
  }
  if (policy === "latency") {
    const pool = latencyPool(facts, usable, tuning);
    const first = pool.members[pickIndex(pool.members.length, random)] as number;
    if (pool.measuring) return { first, reason: "measuring" };
    return { first, reason: topDown ? "failover" : "fastest" };
  }
  const weighted = usable.filter((i) => (facts[i]?.weight ?? 0) > 0);
  if (weighted.length === 0) return { first: best, reason: "failover" };
  const total = weighted.reduce((sum, i) => sum + (facts[i]?.weight ?? 0), 0);
  let draw = random() * total;
  for (const index of weighted) {
    draw -= facts[index]?.weight ?? 0;
    if (draw < 0) return { first: index, reason: "weight" };
  }
  return { first: weighted[weighted.length - 1] as number, reason: "weight" };
}

/** Each usable cluster's share of the requests that are no probe. */
function mainShares(
  facts: readonly ClusterFacts[],
  policy: SteeredPolicy,
  usable: readonly number[],
  tuning: Tuning,
): [number, number][] {
  if (policy === "latency") {
    const { members } = latencyPool(facts, usable, tuning);
    return members.map((index) => [index, 1 / members.length]);
  }
  if (policy === "weighted") {
    const weighted = usable.filter((i) => (facts[i]?.weight ?? 0) > 0);
    const total = weighted.reduce((sum, i) => sum + (facts[i]?.weight ?? 0), 0);
    if (total > 0) return weighted.map((index) => [index, (facts[index]?.weight ?? 0) / total]);
  }
  return [[usable[0] as number, 1]];
}

/** latency: the clusters a request is spread over, or the unmeasured ones while none has answered yet. */
function latencyPool(
  facts: readonly ClusterFacts[],
  usable: readonly number[],
  tuning: Tuning,
): { members: number[]; measuring: boolean } {
  const measured = usable.filter((i) => facts[i]?.ewmaMs !== undefined);
  if (measured.length === 0) return { members: [...usable], measuring: true };
  const fastest = facts[measured[0] as number]?.ewmaMs as number;
  const limit = fastest * (1 + tuning.toleranceRatio) + tuning.toleranceMs;
  return { members: measured.filter((i) => (facts[i]?.ewmaMs as number) <= limit), measuring: false };
}

function probeCandidates(
  facts: readonly ClusterFacts[],
  policy: SteeredPolicy,
  usable: readonly number[],
  others: readonly number[],
  tuning: Tuning,
): number[] {
  const probes = others.filter((i) => facts[i]?.health === "recovering");
  if (policy !== "latency") return probes;
  const pool = latencyPool(facts, usable, tuning);
  if (pool.measuring) return probes;
  const members = new Set(pool.members);
  return [...usable.filter((i) => !members.has(i)), ...probes];
}

/** The policy's order over every cluster, health aside. */
function rank(facts: readonly ClusterFacts[], policy: SteeredPolicy): number[] {
  const key = (fact: ClusterFacts): number => {
    if (policy === "proximity") return fact.distanceKm ?? Number.POSITIVE_INFINITY;
    if (policy === "latency") return fact.ewmaMs ?? Number.POSITIVE_INFINITY;
    return -fact.weight;
  };
  return facts
    .map((_, index) => index)
    .sort((a, b) => {
      const x = facts[a] as ClusterFacts;
      const y = facts[b] as ClusterFacts;
      const byKey = key(x) - key(y);
      if (byKey !== 0 && !Number.isNaN(byKey)) return byKey;
      if (x.local !== y.local) return x.local ? -1 : 1;
      return x.name < y.name ? -1 : x.name > y.name ? 1 : 0;
    });
}

function withFirst(first: number, order: readonly number[]): number[] {
  return [first, ...order.filter((index) => index !== first)];
}

/** A uniform index below `length` (> 0) from one draw in [0, 1). */
function pickIndex(length: number, random: () => number): number {
  return Math.min(length - 1, Math.floor(random() * length));
}
