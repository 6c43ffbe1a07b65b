import type { BackendRef } from "../../../store/routes.js";

/** Which backendRef of a rule one request goes to. */
export type BackendChoice =
  | { readonly kind: "service"; readonly index: number; readonly service: string; readonly port: number }
  /** The share of an invalid backendRef: answered 500 (Gateway API HTTPRouteRule.backendRefs). */
  | { readonly kind: "invalid"; readonly index: number; readonly reason: string }
  /** No backendRefs, or every weight 0: answered 500 (conformance HTTPRouteAllBackendsWeightZero). */
  | { readonly kind: "none" };

/**
 * Weighted choice: a backendRef gets weight / (sum of weights) of the requests; weight 0 gets none.
 * `random` returns [0, 1), as Math.random does; the router passes its own so tests can fix it.
 */
export function chooseBackend(backends: readonly BackendRef[], random: () => number): BackendChoice {
  // The usual rule has one backend: no draw needed.
  const [only] = backends;
  if (backends.length === 1 && only !== undefined && only.weight > 0) return choice(only, 0);
  let total = 0;
  for (const backend of backends) total += backend.weight;
  if (total <= 0) return { kind: "none" };
  // Float rounding can leave `point` a hair above 0 after the last weighted entry: that entry takes it.
  const last = lastWeighted(backends);
  let point = random() * total;
  for (let index = 0; index < backends.length; index += 1) {
    const backend = backends[index] as BackendRef;
    if (backend.weight === 0) continue;
    point -= backend.weight;
    if (point < 0 || index === last) return choice(backend, index);
  }
  return { kind: "none" };
}

function lastWeighted(backends: readonly BackendRef[]): number {
  for (let index = backends.length - 1; index >= 0; index -= 1) {
    if ((backends[index]?.weight ?? 0) > 0) return index;
  }
  return -1;
}

function choice(backend: BackendRef, index: number): BackendChoice {
  if ("invalid" in backend) return { kind: "invalid", index, reason: backend.invalid };
  return { kind: "service", index, service: backend.service, port: backend.port };
}
