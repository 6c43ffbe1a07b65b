import type { RuleRetry, RuleTimeouts } from "../../../store/routes.js";
import type { PolicyDeps, ProxySettings } from "./proxy-policy.js";

/** What of a rule changes the proxy's policy: its HTTPRouteTimeouts and HTTPRouteRetry (core/forwarding/filters.ts RulePlan). */
export interface RulePolicy {
  readonly timeouts: RuleTimeouts | undefined;
  readonly retry: RuleRetry | undefined;
}

const derived = new WeakMap<RulePolicy, WeakMap<PolicyDeps, PolicyDeps>>();

/**
 * The proxy's dependencies with a rule's policy in place of the router's own: `timeouts.request` bounds the
 * request across retries (UPSTREAM_TOTAL_TIMEOUT_MS's place), and `timeouts.backendRequest` each attempt
 * (UPSTREAM_TRY_TIMEOUT_MS's); "request" alone also caps each attempt, since no attempt may outlast the
 * request. `retry.attempts` replaces UPSTREAM_RETRIES, and `retry` itself the router's retry rules
 * (ProxySettings.routeRetry). Memoised per rule plan and router: no allocation per request.
 */
export function withRulePolicy<T extends PolicyDeps>(deps: T, rule: RulePolicy): T {
  const { timeouts, retry } = rule;
  if (timeouts === undefined && retry === undefined) return deps;
  let byDeps = derived.get(rule);
  if (!byDeps) {
    byDeps = new WeakMap();
    derived.set(rule, byDeps);
  }
  const known = byDeps.get(deps);
  if (known) return known as T;
  const made: T = { ...deps, settings: ruleSettings(deps.settings, timeouts, retry) };
  byDeps.set(deps, made);
  return made;
}

function ruleSettings(
  settings: ProxySettings,
  timeouts: RuleTimeouts | undefined,
  retry: RuleRetry | undefined,
): ProxySettings {
  const totalTimeoutMs = timeouts?.requestMs ?? settings.totalTimeoutMs;
  const tryTimeoutMs = timeouts?.backendRequestMs ?? Math.min(settings.tryTimeoutMs, totalTimeoutMs);
  if (retry === undefined) return { ...settings, totalTimeoutMs, tryTimeoutMs };
  return {
    ...settings,
    totalTimeoutMs,
    tryTimeoutMs,
    retries: retry.attempts ?? settings.retries,
    routeRetry: { codes: new Set(retry.codes), backoffMs: retry.backoffMs ?? 0 },
  };
}
