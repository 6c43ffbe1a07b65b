import {
  type CompiledModifier,
  compileModifier,
  thenModifier,
} from "../../../store/filters/header-modifier.js";
import type { RouteRule, RuleRetry, RuleTimeouts } from "../../../store/routes.js";
import { HOP_BY_HOP } from "../http/hop-by-hop.js";

/**
 * What the router applies of a rule before sending it upstream: its header modifiers (RequestHeaderModifier,
 * ResponseHeaderModifier: store/filters/header-modifier.ts), then the chosen backendRef's, with its timeouts
 * and retry; rule-filters.ts applies it with the other filters.
 *
 * A header modifier never touches what the router owns: the hop-by-hop fields (RFC 9110 §7.6.1, headers.ts)
 * and the framing (Content-Length), the forwarding fields the router writes (Host, X-Forwarded-For,
 * X-Forwarded-Proto, X-Forwarded-Host, Forwarded, X-Request-Id) and Expect; a rewrite of Host is URLRewrite's
 * `hostname`. On a response the same hop-by-hop and framing fields and X-Request-Id are kept. Names outside
 * these are set, added or removed as the route says; protected ones are left out of the compiled modifier.
 */

const HOP_AND_FRAMING = [...HOP_BY_HOP, "content-length"];

export const PROTECTED_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  ...HOP_AND_FRAMING,
  "host",
  "expect",
  "x-forwarded-for",
  "x-forwarded-proto",
  "x-forwarded-host",
  "forwarded",
  "x-request-id",
]);

export const PROTECTED_RESPONSE_HEADERS: ReadonlySet<string> = new Set([...HOP_AND_FRAMING, "x-request-id"]);

/** What the transports apply for one rule, compiled once per rule object. */
export interface RulePlan {
  readonly requestHeaders: CompiledModifier | undefined;
  readonly responseHeaders: CompiledModifier | undefined;
  /** HTTPRouteTimeouts, applied by rule-policy.ts withRulePolicy. */
  readonly timeouts: RuleTimeouts | undefined;
  /** HTTPRouteRetry, applied by rule-policy.ts withRulePolicy. */
  readonly retry: RuleRetry | undefined;
}

const plans = new WeakMap<RouteRule, RulePlan[]>();

/**
 * The plan of `rule` for a request sent to its backendRef `backendIndex`: the rule's header modifiers, then
 * that backend's (HTTPBackendRef.filters), compiled once per rule and backend.
 */
export function rulePlan(rule: RouteRule, backendIndex = -1): RulePlan {
  let byBackend = plans.get(rule);
  if (!byBackend) {
    byBackend = [];
    plans.set(rule, byBackend);
  }
  const slot = backendIndex + 1;
  let plan = byBackend[slot];
  if (!plan) {
    const backend = rule.backends[backendIndex];
    const filters = backend && "service" in backend ? backend.filters : undefined;
    plan = {
      requestHeaders: thenModifier(
        compileModifier(rule.filters.requestHeaders, PROTECTED_REQUEST_HEADERS),
        compileModifier(filters?.requestHeaders, PROTECTED_REQUEST_HEADERS),
      ),
      responseHeaders: thenModifier(
        compileModifier(rule.filters.responseHeaders, PROTECTED_RESPONSE_HEADERS),
        compileModifier(filters?.responseHeaders, PROTECTED_RESPONSE_HEADERS),
      ),
      timeouts: rule.timeouts,
      retry: rule.retry,
    };
    byBackend[slot] = plan;
  }
  return plan;
}
