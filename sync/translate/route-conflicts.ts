import { byCodeUnits } from "../../lib/code-unit-order.js";
import { isPassthroughRoute, type RouteMatch, type RouteRecord } from "../../store/routes.js";

/**
 * Host ownership within one cluster. Two routes that ask for the same host pattern and exactly the same
 * request (path type and value, method, headers) cannot both be served: the router gives it to the first by
 * the Gateway API's precedence among equal matches, the oldest route (createdAt: the object's
 * creationTimestamp, a Service's for annotation routes), then the lower route id (`<source>:<namespace>/<name>`).
 * This is the documented rule for every source; a conflict is reported, never silently resolved.
 */
export interface RouteConflict {
  /** The host pattern both claim, or `*` for routes without hostnames. */
  readonly host: string;
  /** The request both ask for, e.g. `PathPrefix /api GET header x-env=blue`. */
  readonly match: string;
  /** The route the router serves it from. */
  readonly winner: string;
  readonly loser: string;
}

/**
 * Every conflict among `routes`, one per losing route, host and match, sorted. A route never conflicts with
 * itself (its own rules are tried in order). Fallback routes (an Ingress defaultBackend) only meet each other,
 * and so do passthrough routes (TLSRoutes: two that claim one SNI, the older serves it).
 */
export function routeConflicts(routes: Iterable<RouteRecord>): RouteConflict[] {
  const claims = new Map<string, { route: RouteRecord; host: string; match: string }[]>();
  for (const route of routes) {
    const hosts = route.hostnames.length === 0 ? ["*"] : route.hostnames;
    const seen = new Set<string>();
    for (const rule of route.rules) {
      for (const match of rule.matches) {
        const described = describeMatch(match);
        for (const host of hosts) {
          const key = `${kindOf(route)}\n${host}\n${described}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const list = claims.get(key) ?? [];
          list.push({ route, host, match: described });
          claims.set(key, list);
        }
      }
    }
  }
  const conflicts: RouteConflict[] = [];
  for (const list of claims.values()) {
    if (list.length < 2) continue;
    list.sort((a, b) => precedence(a.route, b.route));
    const [first, ...rest] = list;
    if (!first) continue;
    for (const other of rest) {
      conflicts.push({ host: other.host, match: other.match, winner: first.route.id, loser: other.route.id });
    }
  }
  return conflicts.sort(
    (a, b) => byCodeUnits(a.host, b.host) || byCodeUnits(a.match, b.match) || byCodeUnits(a.loser, b.loser),
  );
}

/** Routes meet only routes of their kind: HTTP routes, fallback routes, passthrough routes. */
function kindOf(route: RouteRecord): string {
  return isPassthroughRoute(route) ? "passthrough" : route.fallback ? "fallback" : "route";
}

/** Negative when `a` wins an exact tie: older first, then the lower id. */
export function precedence(a: RouteRecord, b: RouteRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return byCodeUnits(a.id, b.id);
}

/** One canonical text per set of requests a match accepts (a PathPrefix's trailing slash does not count). */
export function describeMatch(match: RouteMatch): string {
  const value =
    match.path.type === "PathPrefix" && match.path.value.length > 1
      ? match.path.value.replace(/\/+$/, "") || "/"
      : match.path.value;
  const parts = [`${match.path.type} ${value}`];
  if (match.method !== undefined) parts.push(match.method);
  const headers = match.headers.map((header) => `header ${header.name}=${header.value}`).sort(byCodeUnits);
  return [...parts, ...headers].join(" ");
}
