import type { Result } from "../../lib/result.js";
import {
  type AnyFilterKind,
  type FilterContext,
  type FilterProblem,
  type GatewayFilter,
  type RuleFacts,
  unsupported,
} from "./filter-kind.js";
import { type BackendFilters, FILTER_KINDS, type RouteFilters } from "./kinds.js";

/**
 * A rule's filters (HTTPRouteRule.filters, GRPCRouteRule.filters) → its record filters, or why the rule is
 * dropped: a type no kind of FILTER_KINDS carries, a value the router could not honour (UnsupportedValue), or
 * kinds that cannot stand together (IncompatibleFilters).
 *
 * Every value the router writes into a head (a path into the request target or Location, a host name, a port,
 * a header name or value) must be one the wire can carry: one that is not would fail each request of the rule
 * at the router, so the rule is dropped and the status quotes the value (as JSON: no raw CR or LF in it).
 */
export function translateRuleFilters(
  filters: readonly GatewayFilter[],
  rule: RuleFacts,
  context: FilterContext,
): Result<RouteFilters, FilterProblem> {
  return translateKinds(FILTER_KINDS, filters, rule, context) as Result<RouteFilters, FilterProblem>;
}

/** Kinds translated filter by filter: those HTTPBackendRef.filters may hold, and RequestRedirect (refused there). */
const IN_ORDER_KINDS = FILTER_KINDS.filter((kind) => kind.translated === "in-order");
const NO_REFS: FilterContext = { resolveBackendRef: () => undefined };

/**
 * HTTPBackendRef.filters → the backend's header modifiers and URLRewrite. A RequestRedirect there is
 * IncompatibleFilters (it stands beside a backend); RequestMirror, CORS and any other type drop the rule, as
 * an unsupported filter on the rule does.
 */
export function translateBackendRefFilters(
  filters: readonly GatewayFilter[],
  paths: RuleFacts["paths"],
): Result<BackendFilters | undefined, FilterProblem> {
  if (filters.length === 0) return { ok: true, value: undefined };
  const rule = { paths, hasBackends: true };
  return translateKinds(IN_ORDER_KINDS, filters, rule, NO_REFS) as Result<BackendFilters, FilterProblem>;
}

/**
 * In the rule's order first, each filter of an "in-order" kind (the first of a type kept) or of no kind, so
 * the status names the first that fails; then what the kinds refuse together; then the "whole-rule" kinds, in
 * the order of `kinds`.
 */
function translateKinds(
  kinds: readonly AnyFilterKind[],
  filters: readonly GatewayFilter[],
  rule: RuleFacts,
  context: FilterContext,
): Result<Record<string, unknown>, FilterProblem> {
  const byType = new Map(kinds.map((kind) => [kind.type, kind]));
  const translated: Record<string, unknown> = {};
  for (const filter of filters) {
    const kind = byType.get(filter.type);
    if (!kind) return { ok: false, error: unsupported(`filter ${filter.type} is not supported`) };
    if (kind.translated !== "in-order") continue;
    const value = kind.translate([filter], context);
    if (!value.ok) return { ok: false, error: unsupported(value.error) };
    translated[kind.field] ??= value.value;
  }
  for (const kind of kinds) {
    const problem = kind.check?.(translated, rule);
    if (problem) return { ok: false, error: problem };
  }
  for (const kind of kinds) {
    if (kind.translated !== "whole-rule") continue;
    const value = kind.translate(
      filters.filter((filter) => filter.type === kind.type),
      context,
    );
    if (!value.ok) return { ok: false, error: unsupported(value.error) };
    if (value.value !== undefined) translated[kind.field] = value.value;
  }
  return { ok: true, value: translated };
}
