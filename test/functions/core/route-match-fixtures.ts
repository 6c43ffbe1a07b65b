import * as v from "valibot";
import type { RequestFacts } from "../../../functions/core/routes/request-match.js";
import { buildRouteTable, matchRoute } from "../../../functions/core/routes/route-table.js";
import type { HttpMethod } from "../../../lib/http-methods.js";
import {
  type BackendRef,
  MATCH_EVERYTHING,
  type RouteMatch,
  type RouteRecord,
  RouteRecordSchema,
  type RouteRule,
} from "../../../store/routes.js";

/** Builders for route records (checked against the store schema) and requests, for the matcher tests. */

type MatchOptions = { method?: HttpMethod; headers?: Record<string, string> };

export function prefix(value: string, options: MatchOptions = {}): RouteMatch {
  return withOptions({ path: { type: "PathPrefix", value }, headers: [] }, options);
}

export function exact(value: string, options: MatchOptions = {}): RouteMatch {
  return withOptions({ path: { type: "Exact", value }, headers: [] }, options);
}

function withOptions(match: RouteMatch, options: MatchOptions): RouteMatch {
  const headers = Object.entries(options.headers ?? {}).map(([name, value]) => ({ name, value }));
  return options.method ? { ...match, headers, method: options.method } : { ...match, headers };
}

/** A rule sending its matches to Service `shop/<backend>` port 8080. */
export function rule(backend: string, ...matches: RouteMatch[]): RouteRule {
  const backends: BackendRef[] = [{ service: `shop/${backend}`, port: 8080, weight: 1 }];
  return { matches: matches.length > 0 ? matches : [MATCH_EVERYTHING], filters: {}, backends };
}

export function route(
  id: string,
  options: {
    hostnames?: string[];
    wildcard?: RouteRecord["wildcard"];
    createdAt?: number;
    fallback?: true;
    rules: RouteRule[];
  },
): RouteRecord {
  const record: RouteRecord = {
    v: 2,
    id,
    source: (id.split(":")[0] ?? "httproute") as RouteRecord["source"],
    createdAt: options.createdAt ?? 1_000,
    hostnames: options.hostnames ?? [],
    wildcard: options.wildcard ?? "suffix",
    ...(options.fallback ? { fallback: true as const } : {}),
    rules: options.rules,
  };
  return v.parse(RouteRecordSchema, record);
}

export function request(path: string, options: { method?: string; headers?: Record<string, string> } = {}) {
  return {
    path,
    method: options.method ?? "GET",
    headers: new Headers(options.headers ?? {}),
  } satisfies RequestFacts;
}

/** The Service the winning rule sends to (its first backend), or 404. */
export function served(routes: RouteRecord[], host: string, facts: RequestFacts): string {
  const table = buildRouteTable(routes.map((record) => ({ route: record })));
  const found = matchRoute(table, host, facts);
  if (!found) return "404";
  const backend = found.rule.backends[0];
  return backend && "service" in backend ? (backend.service.split("/")[1] ?? "?") : "500";
}
