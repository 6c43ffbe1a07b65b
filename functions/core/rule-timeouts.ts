import type { RuleTimeouts } from "../../store/routes.js";
import type { PolicyDeps } from "./proxy-policy.js";

const derived = new WeakMap<RuleTimeouts, WeakMap<PolicyDeps, PolicyDeps>>();

/**
 * The proxy's dependencies with a rule's HTTPRouteTimeouts in place of the router's own limits:
 * `timeouts.request` bounds the request across retries (UPSTREAM_TOTAL_TIMEOUT_MS's place), and
 * `timeouts.backendRequest` each attempt (UPSTREAM_TRY_TIMEOUT_MS's). "request" alone also caps each attempt,
 * since no attempt may outlast the request. Memoised per rule and router: no allocation per request.
 */
export function withRuleTimeouts<T extends PolicyDeps>(deps: T, timeouts: RuleTimeouts | undefined): T {
  if (timeouts === undefined) return deps;
  let byDeps = derived.get(timeouts);
  if (!byDeps) {
    byDeps = new WeakMap();
    derived.set(timeouts, byDeps);
  }
  const known = byDeps.get(deps);
  if (known) return known as T;
  const totalTimeoutMs = timeouts.requestMs ?? deps.settings.totalTimeoutMs;
  const tryTimeoutMs = timeouts.backendRequestMs ?? Math.min(deps.settings.tryTimeoutMs, totalTimeoutMs);
  const made: T = { ...deps, settings: { ...deps.settings, totalTimeoutMs, tryTimeoutMs } };
  byDeps.set(deps, made);
  return made;
}
