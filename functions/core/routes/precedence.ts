import { normalisePathPrefix } from "../../../store/paths.js";
import type { RouteRecord } from "../../../store/routes.js";

/**
 * Where one match of one rule stands among every match that serves the same host bucket. Gateway API
 * HTTPRouteRule.matches: "precedence must be given to the match having: Exact path match; Prefix path
 * match with largest number of characters; Method match; Largest number of header matches; Largest number of
 * query param matches. If ties
 * still exist across multiple Routes [...]: the oldest Route based on creation timestamp; the Route
 * appearing first in alphabetical order by {namespace}/{name}. If ties still exist within an HTTPRoute,
 * [...] the FIRST matching rule (in list order)".
 * Every host bucket covering the request takes part; the more specific host wins only between matches that
 * rank the same on the match alone (route-table.ts matchRoute).
 */
export interface MatchRank {
  /** An Ingress defaultBackend: after everything else of its bucket. */
  readonly fallback: boolean;
  readonly exact: boolean;
  /** Characters of the path value (PathPrefix without its trailing slash). */
  readonly pathLength: number;
  readonly method: boolean;
  readonly headers: number;
  readonly queryParams: number;
  readonly createdAt: number;
  /** Route ids are `<source>:<namespace>/<name>`, so within one source this is namespace/name order. */
  readonly routeId: string;
  readonly ruleIndex: number;
  readonly matchIndex: number;
}

export function rankOf(route: RouteRecord, ruleIndex: number, matchIndex: number): MatchRank {
  const match = route.rules[ruleIndex]?.matches[matchIndex];
  if (match === undefined) throw new RangeError(`${route.id} has no match ${ruleIndex}/${matchIndex}`);
  const exact = match.path.type === "Exact";
  return {
    fallback: route.fallback === true,
    exact,
    pathLength: exact ? match.path.value.length : normalisePathPrefix(match.path.value).length,
    method: match.method !== undefined,
    headers: match.headers.length,
    queryParams: match.queryParams?.length ?? 0,
    createdAt: route.createdAt,
    routeId: route.id,
    ruleIndex,
    matchIndex,
  };
}

/** Negative when `a` wins over `b`. A total order: only the same match of the same route ties. */
export function compareRanks(a: MatchRank, b: MatchRank): number {
  if (a.fallback !== b.fallback) return a.fallback ? 1 : -1;
  if (a.exact !== b.exact) return a.exact ? -1 : 1;
  if (a.pathLength !== b.pathLength) return b.pathLength - a.pathLength;
  if (a.method !== b.method) return a.method ? -1 : 1;
  if (a.headers !== b.headers) return b.headers - a.headers;
  if (a.queryParams !== b.queryParams) return b.queryParams - a.queryParams;
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  // Plain code-unit order, not localeCompare: the same on every runtime and locale.
  if (a.routeId !== b.routeId) return a.routeId < b.routeId ? -1 : 1;
  if (a.ruleIndex !== b.ruleIndex) return a.ruleIndex - b.ruleIndex;
  return a.matchIndex - b.matchIndex;
}
