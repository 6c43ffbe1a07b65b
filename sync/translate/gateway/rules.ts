import * as v from "valibot";
import type { FilterContext, FilterProblem } from "../../../store/filters/filter-kind.js";
import { translateBackendRefFilters, translateRuleFilters } from "../../../store/filters/translate.js";
import { type BackendFilters, type RouteRule, RouteRuleSchema } from "../../../store/routes.js";
import { type BackendContext, type RefProblem, resolveBackendRef } from "./backends.js";
import { translateMatches } from "./matches.js";
import type { KubeBackendRef, KubeRule } from "./objects.js";
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
  const paths = matches.value.map((match) => match.path);
  const backendFilters: (BackendFilters | undefined)[] = [];
  for (const ref of refs) {
    const translated = translateBackendRefFilters(ref.filters ?? [], paths);
    if (!translated.ok) return { ok: false, ...translated.error };
    backendFilters.push(translated.value);
  }
  const refProblems: RefProblem[] = [];
  // A filter's backendRef (RequestMirror) is resolved as the rule's are, its problems reported with theirs.
  const filterRefs: FilterContext = {
    resolveBackendRef(ref) {
      const resolved = resolveBackendRef(ref as KubeBackendRef, routeNamespace, fromKind, context);
      if (resolved.problem) refProblems.push(resolved.problem);
      return resolved.problem || !("service" in resolved.backend) ? undefined : resolved.backend;
    },
  };
  const filters = translateRuleFilters(
    rule.filters ?? [],
    { paths, hasBackends: refs.length > 0 },
    filterRefs,
  );
  if (!filters.ok) return { ok: false, ...filters.error };

  const timeouts = translateTimeouts(rule.timeouts);
  if (!timeouts.ok) return { ok: false, reason: "UnsupportedValue", message: timeouts.error };
  const retried = translateRetry(rule.retry);
  if (!retried.ok) return { ok: false, reason: "UnsupportedValue", message: retried.error };

  const backends = refs.map((ref, index) => {
    const resolved = resolveBackendRef(ref, routeNamespace, fromKind, context);
    if (resolved.problem) refProblems.push(resolved.problem);
    const filters = backendFilters[index];
    return filters && "service" in resolved.backend ? { ...resolved.backend, filters } : resolved.backend;
  });
  const translated: RouteRule = {
    matches: matches.value,
    filters: filters.value,
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
