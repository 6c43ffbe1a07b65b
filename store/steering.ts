import * as v from "valibot";
import { ClusterNameSchema } from "./names.js";

/**
 * How a Service's traffic is spread across the clusters that serve it: the `steering` field of a service record
 * (services.ts), written from the Service's `edgeslice.io/cluster-steering` and `edgeslice.io/cluster-weights`
 * annotations; a router without it uses its CLUSTER_STEERING. functions/core/steering/ applies it.
 */
export const STEERING_POLICIES = ["local-first", "proximity", "latency", "weighted"] as const;
export type SteeringPolicy = (typeof STEERING_POLICIES)[number];

/** A share per cluster is at most this (so a sum over every cluster stays a safe integer). */
export const MAX_CLUSTER_WEIGHT = 1_000_000;
/** Clusters one weights list may name. */
export const MAX_WEIGHTED_CLUSTERS = 100;

export const ClusterWeightSchema = v.object({
  cluster: ClusterNameSchema,
  weight: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_CLUSTER_WEIGHT)),
});
export type ClusterWeight = v.InferOutput<typeof ClusterWeightSchema>;

export const ServiceSteeringSchema = v.object({
  policy: v.picklist(STEERING_POLICIES),
  /** `weighted` only: sorted by cluster, each once; a cluster not listed has weight 0. */
  weights: v.optional(
    v.pipe(
      v.array(ClusterWeightSchema),
      v.maxLength(MAX_WEIGHTED_CLUSTERS),
      v.check(
        (weights) => weights.every((entry, i) => i === 0 || (weights[i - 1]?.cluster ?? "") < entry.cluster),
        "weights must be sorted by cluster, each cluster once",
      ),
    ),
  ),
});
export type ServiceSteering = v.InferOutput<typeof ServiceSteeringSchema>;

/** The record's form: fixed key order, weights only when given (equal steerings give equal strings). */
export function canonicalSteering(steering: ServiceSteering): ServiceSteering {
  return steering.weights === undefined
    ? { policy: steering.policy }
    : {
        policy: steering.policy,
        weights: steering.weights.map(({ cluster, weight }) => ({ cluster, weight })),
      };
}

/** One string per distinct steering (undefined: none): how a router tells whether clusters agree. */
export function steeringKey(steering: ServiceSteering | undefined): string {
  return steering === undefined ? "" : JSON.stringify(canonicalSteering(steering));
}

/**
 * A parsed service record whose `steering` this router cannot read (a policy newer than it knows, a bad weight)
 * without that field, and why: the Service keeps serving with the router's CLUSTER_STEERING. Anything else is
 * returned as it was, for the record's own schema to judge.
 */
export function withReadableSteering(parsed: unknown): {
  readonly record: unknown;
  readonly problem?: string;
} {
  if (parsed === null || typeof parsed !== "object" || !("steering" in parsed)) return { record: parsed };
  const { steering, ...rest } = parsed as { steering: unknown };
  if (steering === undefined) return { record: parsed };
  const checked = v.safeParse(ServiceSteeringSchema, steering);
  if (checked.success) return { record: parsed };
  const issue = checked.issues[0];
  const path = issue ? v.getDotPath(issue) : null;
  return { record: rest, problem: `steering${path ? `.${path}` : ""}: ${issue?.message ?? "invalid"}` };
}
