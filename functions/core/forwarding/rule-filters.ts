import { corsOutcome } from "../../../store/filters/cors.js";
import { type CompiledModifier, thenModifier } from "../../../store/filters/header-modifier.js";
import type { MatchedBy } from "../../../store/filters/path-modifier.js";
import { redirectLocation } from "../../../store/filters/request-redirect.js";
import { rewrittenHost, rewrittenPath } from "../../../store/filters/url-rewrite.js";
import type { RouteRule } from "../../../store/routes.js";
import type { RequestTarget } from "../http/request-target.js";
import type { MirrorTarget } from "../routes/mirrors.js";
import type { Preflighted, Redirected, Routed, RoutingRequest } from "../routing-outcome.js";
import type { Selection } from "../selection/selection.js";
import { type RulePlan, rulePlan } from "./filters.js";

/**
 * What the router does with a matched rule's filters, each through its kind's module (store/filters/): first
 * the answers the router gives itself, a CORS preflight before a RequestRedirect; then, for a request sent on,
 * the URLRewrite'd path and Host and the header plan (core/forwarding/filters.ts), the CORS fields after the response's
 * modifiers. A RequestMirror's copies go to endpoints routing picks (routes/mirrors.ts).
 */

/** Not answered by the filters: the CORS fields (if any) the backend's answer gets. */
export interface Forwarded {
  readonly corsFields: CompiledModifier | undefined;
}

/** The usual case, one object for every request (this runs for each). */
const NO_CORS_FIELDS: Forwarded = { corsFields: undefined };

export function filtersAnswer(
  rule: RouteRule,
  request: RoutingRequest,
  target: RequestTarget,
  host: string,
  match: MatchedBy,
): Preflighted | Redirected | Forwarded {
  const { redirect, cors } = rule.filters;
  const corsAnswer = cors ? corsOutcome(cors, request) : undefined;
  if (corsAnswer && "preflight" in corsAnswer) return corsAnswer;
  if (!redirect) return corsAnswer?.response ? { corsFields: corsAnswer.response } : NO_CORS_FIELDS;
  const from = { proto: request.proto ?? target.proto, authority: target.authority, host, path: target.path };
  return { redirect: { status: redirect.statusCode, location: redirectLocation(redirect, from, match) } };
}

/** The request sent to the rule's backendRef `backendIndex` (its `selection`), as the rule's filters send it. */
export function forwardedBy(
  rule: RouteRule,
  backendIndex: number,
  target: RequestTarget,
  match: MatchedBy,
  { corsFields }: Forwarded,
  selection: Selection,
  mirrors: readonly MirrorTarget[],
): Routed {
  const chosen = rule.backends[backendIndex];
  const backendRewrite = chosen && "service" in chosen ? chosen.filters?.rewrite : undefined;
  return {
    target,
    selection,
    upstreamPath: rewrittenPath(target.path, match, rule.filters.rewrite, backendRewrite),
    upstreamHost: rewrittenHost(rule.filters.rewrite, backendRewrite),
    plan: withCorsFields(rulePlan(rule, backendIndex), corsFields),
    mirrors,
  };
}

/** The rule's plan with a CORS answer's fields after its response header modifiers (per request: they echo Origin). */
function withCorsFields(plan: RulePlan, cors: CompiledModifier | undefined): RulePlan {
  return cors ? { ...plan, responseHeaders: thenModifier(plan.responseHeaders, cors) } : plan;
}
