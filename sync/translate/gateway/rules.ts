import * as v from "valibot";
import { type BackendFilters, type RouteRule, RouteRuleSchema } from "../../../store/routes.js";
import { type BackendContext, type RefProblem, resolveBackendRef } from "./backends.js";
import { translateCors } from "./cors.js";
import { type FilterProblem, translateBackendFilters, translateFilters } from "./filters.js";
import { translateMatches } from "./matches.js";
import { translateMirrors } from "./mirrors.js";
import type { KubeRule } from "./objects.js";
import { translateRetry } from "./retry.js";
import { translateTimeouts } from "./timeouts.js";

/** One HTTPRouteRule: the store rule and its unresolved references, or why the rule is dropped. */
export type RuleTranslation =
  | {
      readonly ok: true;
      readonly rule: RouteRule;
      readonly refProblems: readonly RefProblem[];
      /** Fields read but not applied: logged, the rule still serves. */
      readonly ignored: readonly string[];
    }
  | ({ readonly ok: false } & FilterProblem);

/**
 * HTTPRouteRule → store rule. A rule this implementation cannot carry out faithfully is dropped rather than
 * served differently; the route then reports PartiallyInvalid ("Dropped Rule") or, with no rule left,
 * Accepted=False UnsupportedValue (Gateway API RouteConditionPartiallyInvalid).
 */
export function translateRule(
  rule: KubeRule,
  routeNamespace: string,
  context: BackendContext,
  /** The route kind ReferenceGrants name as `from`. */
  fromKind: "HTTPRoute" | "GRPCRoute" = "HTTPRoute",
): RuleTranslation {
  const matches = translateMatches(rule.matches);
  if (!matches.ok) return { ok: false, reason: "UnsupportedValue", message: matches.error };
  const refs = rule.backendRefs ?? [];
  const backendFilters: (BackendFilters | undefined)[] = [];
  for (const ref of refs) {
    const translated = translateBackendFilters(ref.filters ?? [], matches.value);
    if (!translated.ok) return { ok: false, ...translated.error };
    backendFilters.push(translated.value);
  }
  const ruleFilters = rule.filters ?? [];
  const filters = translateFilters(
    ruleFilters.filter((filter) => filter.type !== "RequestMirror" && filter.type !== "CORS"),
    matches.value,
    refs.length > 0,
  );
  if (!filters.ok) return { ok: false, ...filters.error };
  const mirrored = translateMirrors(ruleFilters, routeNamespace, context, fromKind);
  if (!mirrored.ok) return { ok: false, reason: "UnsupportedValue", message: mirrored.error };

  const cors = translateCors(ruleFilters);
  if (!cors.ok) return { ok: false, reason: "UnsupportedValue", message: cors.error };

  const timeouts = translateTimeouts(rule.timeouts);
  if (!timeouts.ok) return { ok: false, reason: "UnsupportedValue", message: timeouts.error };
  const retried = translateRetry(rule.retry);
  if (!retried.ok) return { ok: false, reason: "UnsupportedValue", message: retried.error };

  const refProblems: RefProblem[] = [...mirrored.value.refProblems];
  const backends = refs.map((ref, index) => {
    const resolved = resolveBackendRef(ref, routeNamespace, fromKind, context);
    if (resolved.problem) refProblems.push(resolved.problem);
    const filters = backendFilters[index];
    return filters && "service" in resolved.backend ? { ...resolved.backend, filters } : resolved.backend;
  });
  const translated: RouteRule = {
    matches: matches.value,
    filters: {
      ...filters.value,
      ...(mirrored.value.mirrors.length > 0 ? { mirrors: [...mirrored.value.mirrors] } : {}),
      ...(cors.value ? { cors: cors.value } : {}),
    },
    backends,
    ...(timeouts.value ? { timeouts: timeouts.value } : {}),
    ...(retried.value.retry ? { retry: retried.value.retry } : {}),
  };
  // Last guard: what passes here is what routers will accept when they decode the record.
  const checked = v.safeParse(RouteRuleSchema, translated);
  if (!checked.success) {
    const issue = checked.issues[0];
    const path = issue ? v.getDotPath(issue) : null;
    return {
      ok: false,
      reason: "UnsupportedValue",
      message: `${path ?? "rule"}: ${issue?.message ?? "invalid"}`,
    };
  }
  return { ok: true, rule: checked.output, refProblems, ignored: retried.value.ignored };
}
