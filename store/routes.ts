import * as v from "valibot";
import { HTTP_METHODS } from "../lib/http-methods.js";
import type { Result } from "../lib/result.js";
import { BackendFiltersSchema, RouteFiltersSchema } from "./filters/kinds.js";
import { ServiceIdSchema } from "./names.js";
import { HeaderNameSchema, HeaderValueSchema, HostPatternSchema, PortNumberSchema } from "./wire-values.js";

export { type Cors, CorsSchema } from "./filters/cors.js";
export { type HeaderModifier, HeaderModifierSchema } from "./filters/header-modifier.js";
export {
  type BackendFilters,
  BackendFiltersSchema,
  type RouteFilters,
  RouteFiltersSchema,
} from "./filters/kinds.js";
export { type PathModifier, PathModifierSchema } from "./filters/path-modifier.js";
export { type Mirror, MirrorSchema } from "./filters/request-mirror.js";
export { type Redirect, RedirectSchema } from "./filters/request-redirect.js";
export { type Rewrite, RewriteSchema } from "./filters/url-rewrite.js";
// A reader of the record finds every part of it here: its values (wire-values.ts) and its filters (filters/).
export {
  HeaderNameSchema,
  HeaderValueSchema,
  HostPatternSchema,
  MAX_HOST_PATTERN_LENGTH,
  PreciseHostnameSchema,
  TargetPathSchema,
} from "./wire-values.js";

/**
 * Route records, schema version 2: where traffic for a host goes, whatever declared it (a Service's
 * `edgeslice.io/*` annotations, a Gateway API HTTPRoute, or an Ingress). One record per route object and
 * cluster; backends are named by Service and port and resolved against that cluster's Service records.
 * The shape follows the Gateway API's HTTPRoute (gateway.networking.k8s.io/v1, standard channel) because it is
 * the richest of the three; annotations and Ingress rules are expressed in it.
 */
export const ROUTE_SCHEMA_VERSION = 2;

/**
 * A `tlsroute` record (a TLSRoute attached to a Passthrough listener) is no HTTP route: its one rule's backends
 * get a TLS connection's bytes as they came, chosen by the ClientHello's server name against its hostnames and
 * listeners, and no HTTP request is ever matched against it (functions/core/routes/route-table.ts keeps such
 * records apart). A router that predates it skips the record, its source being new to the picklist.
 *
 * A `grpcroute` record's backends are spoken to over HTTP/2 cleartext whatever their port's appProtocol
 * (GRPCRoute: implementations "MUST support HTTP/2 over cleartext TCP (h2c) with prior knowledge" to backends);
 * the source being a picklist, a router that predates GRPCRoute skips such a record rather than send gRPC as
 * HTTP/1.1.
 */
export const ROUTE_SOURCES = ["annotation", "httproute", "ingress", "grpcroute", "tlsroute"] as const;
export type RouteSource = (typeof ROUTE_SOURCES)[number];

const PathSchema = v.pipe(v.string(), v.startsWith("/"), v.maxLength(1024));

/** HTTPRoute `matches[].path`: PathPrefix matches whole segments, Exact the whole path (query excluded). */
export const PathMatchSchema = v.strictObject({
  type: v.picklist(["Exact", "PathPrefix"]),
  value: PathSchema,
});
export type PathMatch = v.InferOutput<typeof PathMatchSchema>;

/** HTTPRoute `matches[].headers` of type Exact; names are compared case-insensitively, values exactly. */
export const HeaderMatchSchema = v.strictObject({ name: HeaderNameSchema, value: HeaderValueSchema });
export type HeaderMatch = v.InferOutput<typeof HeaderMatchSchema>;

/**
 * HTTPRoute `matches[].queryParams` of type Exact: the name compared case-sensitively ("Query parameter
 * names MUST be compared case-sensitively" is what HTTPQueryParamMatch.name asks), the value exactly, both
 * percent-decoded from the request target.
 */
export const QueryParamMatchSchema = v.strictObject({
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
  value: v.pipe(v.string(), v.minLength(1), v.maxLength(1024)),
});
export type QueryParamMatch = v.InferOutput<typeof QueryParamMatchSchema>;

/**
 * One HTTPRoute match: every condition must hold. The match objects and filters are strict: a condition this
 * router does not know (a header match of another type, a field added later) would widen the match if it
 * were ignored, and an unknown filter "MUST NOT be skipped" (HTTPRouteFilter), so such a record is refused.
 */
export const RouteMatchSchema = v.strictObject({
  path: PathMatchSchema,
  headers: v.array(HeaderMatchSchema),
  method: v.optional(v.picklist(HTTP_METHODS)),
  queryParams: v.optional(v.array(QueryParamMatchSchema)),
});
export type RouteMatch = v.InferOutput<typeof RouteMatchSchema>;

const WeightSchema = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000));

/**
 * A backendRef. A valid one names a Service port of the route's cluster; an invalid one (a kind other than
 * Service, a Service in another namespace without a ReferenceGrant, no such port) keeps its weight so that its
 * share of requests is answered 500, as the Gateway API asks, instead of moving to the valid backends.
 */
export const BackendRefSchema = v.union([
  v.object({
    service: ServiceIdSchema,
    port: PortNumberSchema,
    weight: WeightSchema,
    filters: v.optional(BackendFiltersSchema),
  }),
  v.object({ invalid: v.pipe(v.string(), v.maxLength(256)), weight: WeightSchema }),
]);
export type BackendRef = v.InferOutput<typeof BackendRefSchema>;

const TimeoutMsSchema = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400_000));

/**
 * HTTPRouteTimeouts in ms: `requestMs` bounds the whole request, across retries (timeouts.request);
 * `backendRequestMs` each attempt to a backend (timeouts.backendRequest). Each replaces the router's own
 * limit for this rule; a router that predates the field keeps its own limits.
 */
export const RuleTimeoutsSchema = v.strictObject({
  requestMs: v.optional(TimeoutMsSchema),
  backendRequestMs: v.optional(TimeoutMsSchema),
});
export type RuleTimeouts = v.InferOutput<typeof RuleTimeoutsSchema>;

/** The most retries a rule may ask for (HTTPRouteRetry.attempts has no maximum; the sync reads more as this). */
export const MAX_RULE_RETRIES = 10;

/**
 * HTTPRouteRetry (experimental channel): `codes` are the backend answers retried (400-599), `attempts` the
 * retries after the first attempt (absent: the router's own count), `backoffMs` the least wait before each
 * retry (absent: none). A rule with a retry also retries connection errors, and may go back to a backend
 * it already tried. A router that predates the field keeps its own retry rules.
 */
export const RuleRetrySchema = v.strictObject({
  codes: v.pipe(v.array(v.pipe(v.number(), v.integer(), v.minValue(400), v.maxValue(599))), v.maxLength(200)),
  attempts: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_RULE_RETRIES))),
  backoffMs: v.optional(TimeoutMsSchema),
});
export type RuleRetry = v.InferOutput<typeof RuleRetrySchema>;

export const RouteRuleSchema = v.object({
  matches: v.pipe(v.array(RouteMatchSchema), v.minLength(1)),
  filters: RouteFiltersSchema,
  backends: v.array(BackendRefSchema),
  timeouts: v.optional(RuleTimeoutsSchema),
  retry: v.optional(RuleRetrySchema),
});
export type RouteRule = v.InferOutput<typeof RouteRuleSchema>;

/**
 * One Gateway listener an HTTPRoute is attached through: the Gateway (`namespace/name`), the listener's port,
 * and the route's hostnames served through it (already intersected with the listener's; empty: every host).
 * A router serves a route only for the Gateways it implements (GATEWAYS) and only to requests made to one
 * of these ports (gateway.networking.k8s.io/v1 Listener.port; ParentReference.port).
 */
export const RouteListenerSchema = v.object({
  gateway: v.pipe(v.string(), v.maxLength(512)),
  port: PortNumberSchema,
  /** Listener.hostname; absent: the listener has none. Among one Gateway's listeners on a port the most specific match takes the request (listener isolation). */
  listenerHostname: v.optional(HostPatternSchema),
  hostnames: v.array(HostPatternSchema),
  /**
   * A TLSRoute's listener in `tls.mode: Terminate`: the router ends TLS with the listener's certificate and
   * relays the decrypted bytes (absent: Passthrough, the bytes go as they came). A router that predates it
   * passes such a connection through, and a backend expecting cleartext fails it.
   */
  tlsMode: v.optional(v.literal("Terminate")),
});
export type RouteListener = v.InferOutput<typeof RouteListenerSchema>;

export const RouteRecordSchema = v.object({
  v: v.literal(ROUTE_SCHEMA_VERSION),
  /** `<source>:<namespace>/<name>`: unique within a cluster, and the same for the same object in every cluster. */
  id: v.pipe(v.string(), v.maxLength(512)),
  source: v.picklist(ROUTE_SOURCES),
  /** metadata.creationTimestamp in ms: the Gateway API breaks precedence ties by the oldest route. */
  createdAt: v.pipe(v.number(), v.integer(), v.minValue(0)),
  /** Lower-case host names or `*.` patterns (a `tlsroute`'s are SNI names); empty means every host (a catch-all). */
  hostnames: v.array(HostPatternSchema),
  /**
   * What a leading `*.` covers: exactly one label for Ingress and annotations (networking.k8s.io/v1
   * IngressRule.host), one or more labels for HTTPRoute (gateway.networking.k8s.io/v1 Hostname).
   */
  wildcard: v.picklist(["one-label", "suffix"]),
  /**
   * Tried after every other route of its hosts, whatever their age: an Ingress `defaultBackend`, which
   * serves only "requests that don't match any rule" (networking.k8s.io/v1 IngressSpec.defaultBackend).
   */
  fallback: v.optional(v.literal(true)),
  /**
   * HTTPRoutes: the listeners it is attached through. Absent (annotations, Ingresses, records of a sync that
   * predates it, which routers that predate it also ignore): the route is served on every port by every router.
   */
  listeners: v.optional(v.array(RouteListenerSchema)),
  rules: v.pipe(v.array(RouteRuleSchema), v.minLength(1)),
});
export type RouteRecord = v.InferOutput<typeof RouteRecordSchema>;

/** A TLSRoute's record: matched by a TLS connection's server name, never by an HTTP request. */
export function isPassthroughRoute(route: Pick<RouteRecord, "source">): boolean {
  return route.source === "tlsroute";
}

/** Route ids: `httproute:shop/web`. */
export function routeId(source: RouteSource, namespace: string, name: string): string {
  return `${source}:${namespace}/${name}`;
}

/** Decodes and validates one stored route record. */
export function decodeRoute(raw: string): Result<RouteRecord> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    return { ok: false, error: `not JSON: ${(error as Error).message}` };
  }
  const result = v.safeParse(RouteRecordSchema, parsed);
  if (result.success) return { ok: true, value: result.output };
  const issue = result.issues[0];
  const path = issue ? v.getDotPath(issue) : null;
  return { ok: false, error: `${path ?? "(root)"}: ${issue?.message ?? "invalid"}` };
}

/** The one match a rule without matches has (Gateway API: a PathPrefix match on "/"). */
export const MATCH_EVERYTHING: RouteMatch = { path: { type: "PathPrefix", value: "/" }, headers: [] };
