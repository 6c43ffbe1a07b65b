import { type ClusterHealthOptions, DEFAULT_CLUSTER_HEALTH } from "./cluster-health.js";

/** The tuning of cross-cluster steering; the defaults are what the router runs with (docs/multi-cluster.md, "Cluster steering"). */
export interface SteeringSettings {
  /** The share of requests that probe a cluster the policy would not pick (slower, unmeasured, recovering). */
  readonly probeShare: number;
  /** latency: clusters within best × (1 + toleranceRatio) + toleranceMs of the fastest share its traffic. */
  readonly toleranceRatio: number;
  readonly toleranceMs: number;
  /** latency: τ of the time-decayed EWMA (ewma.ts), ms. */
  readonly decayMs: number;
  readonly health: ClusterHealthOptions;
  /** Clusters whose state is kept at most (names come from the store; this bounds memory all the same). */
  readonly maxTracked: number;
}

export const DEFAULT_STEERING: SteeringSettings = {
  probeShare: 0.05,
  toleranceRatio: 0.2,
  toleranceMs: 2,
  decayMs: 1_000,
  health: DEFAULT_CLUSTER_HEALTH,
  maxTracked: 1_000,
};

/** `overrides` over the defaults, health options merged field by field. */
export function steeringSettings(
  overrides: Partial<Omit<SteeringSettings, "health">> & {
    readonly health?: Partial<ClusterHealthOptions>;
  } = {},
): SteeringSettings {
  return {
    ...DEFAULT_STEERING,
    ...overrides,
    health: { ...DEFAULT_STEERING.health, ...overrides.health },
  };
}
