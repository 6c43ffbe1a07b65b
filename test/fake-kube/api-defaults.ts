import type { FakeKind } from "./resources.js";
import type { FakeObject } from "./store.js";

/**
 * What the API server fills in on a write, for the kinds where a reader can tell:
 * - every Namespace carries the label `kubernetes.io/metadata.name` with its own name (set by the API server
 *   since Kubernetes 1.21, so a Gateway's listeners can select route namespaces by name);
 * - a GatewayClass or Gateway written without a status gets the one the Gateway API CRDs' schema defaults to
 *   (their conditions Unknown with reason Pending, "Waiting for controller"), as kube-apiserver's structural
 *   defaulting does.
 */
export function applyServerDefaults(kind: FakeKind, object: FakeObject): void {
  if (kind === "Namespace") {
    object.metadata.labels = {
      ...object.metadata.labels,
      "kubernetes.io/metadata.name": object.metadata.name,
    };
  }
  if (object.status !== undefined) return;
  if (kind === "GatewayClass") object.status = { conditions: [pending("Accepted")] };
  if (kind === "Gateway") object.status = { conditions: [pending("Accepted"), pending("Programmed")] };
}

function pending(type: string): object {
  return {
    type,
    status: "Unknown",
    reason: "Pending",
    message: "Waiting for controller",
    lastTransitionTime: "1970-01-01T00:00:00Z",
  };
}
