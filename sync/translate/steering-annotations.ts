import * as v from "valibot";
import { byCodeUnits } from "../../lib/code-unit-order.js";
import type { Result } from "../../lib/result.js";
import { ClusterNameSchema } from "../../store/names.js";
import {
  type ClusterWeight,
  MAX_CLUSTER_WEIGHT,
  MAX_WEIGHTED_CLUSTERS,
  type ServiceSteering,
  STEERING_POLICIES,
  type SteeringPolicy,
} from "../../store/steering.js";
import type { KubeService } from "./kube-objects.js";

export const STEERING_ANNOTATION = "edgeslice.io/cluster-steering";
export const WEIGHTS_ANNOTATION = "edgeslice.io/cluster-weights";

/**
 * A Service's cross-cluster steering, from its annotations: `edgeslice.io/cluster-steering` names the policy
 * (proximity, latency, weighted, local-first) and `edgeslice.io/cluster-weights` the shares of `weighted`
 * (`east=90,west=10`; weights alone mean weighted). The Service record carries it, so HTTPRoute, Ingress and
 * annotation routes to the Service are steered alike. Undefined: neither annotation (the router's
 * CLUSTER_STEERING applies); an error names what is wrong, and the record is published without it.
 */
export function steeringOf(service: KubeService): Result<ServiceSteering | undefined> {
  const annotations = service.metadata.annotations ?? {};
  const rawPolicy = annotations[STEERING_ANNOTATION];
  const rawWeights = annotations[WEIGHTS_ANNOTATION];
  if (rawPolicy === undefined && rawWeights === undefined) return { ok: true, value: undefined };
  let policy: SteeringPolicy = "weighted";
  if (rawPolicy !== undefined) {
    const named = rawPolicy.trim();
    if (!isPolicy(named)) {
      return invalid(
        STEERING_ANNOTATION,
        `"${named.slice(0, 64)}" is not one of ${STEERING_POLICIES.join(", ")}`,
      );
    }
    policy = named;
  }
  if (rawWeights === undefined) return { ok: true, value: { policy } };
  if (policy !== "weighted") {
    return invalid(
      WEIGHTS_ANNOTATION,
      `applies to the weighted policy only, and ${STEERING_ANNOTATION} is ${policy}`,
    );
  }
  const weights = parseClusterWeights(rawWeights);
  if (!weights.ok) return invalid(WEIGHTS_ANNOTATION, weights.error);
  return { ok: true, value: { policy, weights: weights.value } };
}

/** `east=90,west=10`: cluster names (each once) and whole-number shares; sorted by cluster. */
export function parseClusterWeights(raw: string): Result<ClusterWeight[]> {
  const weights: ClusterWeight[] = [];
  for (const item of raw.split(",")) {
    const entry = item.trim();
    if (entry === "") continue;
    const [name = "", share = "", ...rest] = entry.split("=").map((part) => part.trim());
    if (rest.length > 0 || !/^\d{1,7}$/.test(share) || Number(share) > MAX_CLUSTER_WEIGHT) {
      return {
        ok: false,
        error: `"${entry.slice(0, 64)}" is not cluster=weight (a whole number up to ${MAX_CLUSTER_WEIGHT})`,
      };
    }
    const notAName = `"${name.slice(0, 64)}" is not a cluster name`;
    if (!v.is(ClusterNameSchema, name)) return { ok: false, error: notAName };
    if (weights.some((weight) => weight.cluster === name))
      return { ok: false, error: `"${name}" is listed twice` };
    weights.push({ cluster: name, weight: Number(share) });
  }
  if (weights.length === 0) return { ok: false, error: "lists no cluster" };
  if (weights.length > MAX_WEIGHTED_CLUSTERS)
    return { ok: false, error: `lists more than ${MAX_WEIGHTED_CLUSTERS} clusters` };
  if (weights.every((weight) => weight.weight === 0))
    return { ok: false, error: "gives every cluster weight 0" };
  return { ok: true, value: weights.sort((a, b) => byCodeUnits(a.cluster, b.cluster)) };
}

function isPolicy(text: string): text is SteeringPolicy {
  return (STEERING_POLICIES as readonly string[]).includes(text);
}

function invalid(annotation: string, error: string): { readonly ok: false; readonly error: string } {
  return { ok: false, error: `${annotation}: ${error}` };
}
