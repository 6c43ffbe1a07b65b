import * as v from "valibot";
import type { BackendContext } from "./backends.js";
import type { RouteKindSpec } from "./http-route.js";
import {
  BackendRefSchema,
  FilterSchema,
  type KubeMatch,
  type KubeRule,
  NameValueMatchSchema,
  parseWith,
  routeObjectSchema,
} from "./objects.js";
import { type RuleTranslation, translateRule } from "./rules.js";

/**
 * GRPCRoute (gateway.networking.k8s.io/v1, standard channel since v1.1), the parts edgeslice reads. A gRPC call
 * is an HTTP/2 POST to `/<service>/<method>` (gRPC PROTOCOL-HTTP2.md, "Path"), so a GRPCRoute is translated
 * into the route records the router already matches: a method match is a path match, and its backends are
 * spoken to over h2c (the record's source is `grpcroute`, store/routes.ts).
 */
const text = v.nullish(v.string());

const GrpcMatchSchema = v.looseObject({
  method: v.nullish(v.looseObject({ type: text, service: text, method: text })),
  headers: v.nullish(v.array(NameValueMatchSchema)),
});
export type GrpcMatch = v.InferOutput<typeof GrpcMatchSchema>;

const GrpcRuleSchema = v.looseObject({
  name: text,
  matches: v.nullish(v.array(GrpcMatchSchema)),
  filters: v.nullish(v.array(FilterSchema)),
  backendRefs: v.nullish(v.array(BackendRefSchema)),
  sessionPersistence: v.nullish(v.unknown()),
});
export type GrpcRule = v.InferOutput<typeof GrpcRuleSchema>;

export const GRPCRouteSchema = routeObjectSchema(GrpcRuleSchema);
export type GRPCRoute = v.InferOutput<typeof GRPCRouteSchema>;

export const parseGRPCRoute = (input: unknown) => parseWith(GRPCRouteSchema, input);

/**
 * GRPCMethodMatch.service and .method as the CRD validates them for type Exact: a service is a dotted name of
 * identifiers (`pkg.v1.Echo`), a method an identifier. Anything else could not appear in a gRPC path.
 */
const SERVICE = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const METHOD = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The filters GRPCRouteFilter defines that edgeslice applies; ExtensionRef and anything newer are not. */
const GRPC_FILTERS: ReadonlySet<string> = new Set([
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "RequestMirror",
]);

/**
 * One GRPCRouteMatch as an HTTPRouteMatch: service and method (type Exact) are the Exact path
 * `/<service>/<method>`; a service alone, the prefix `/<service>` (every method of it: PathPrefix matches whole
 * segments); neither, every call. A method without a service would need a suffix match the records do not
 * have, and RegularExpression would need a regular expression engine with bounded time: both are refused (the
 * rule is dropped and the route says why), never served wider than written. Header matches are HTTP's.
 */
export function grpcMatchAsHttp(
  match: GrpcMatch,
): { ok: true; match: KubeMatch } | { ok: false; error: string } {
  const type = match.method?.type ?? "Exact";
  const service = match.method?.service ?? undefined;
  const method = match.method?.method ?? undefined;
  if (type !== "Exact") return { ok: false, error: `method match type ${type} is not supported` };
  if (service !== undefined && !SERVICE.test(service))
    return { ok: false, error: `service "${service.slice(0, 64)}" is not a gRPC service name` };
  if (method !== undefined && !METHOD.test(method))
    return { ok: false, error: `method "${method.slice(0, 64)}" is not a gRPC method name` };
  if (method !== undefined && service === undefined)
    return { ok: false, error: `a method match without a service (method ${method}) is not supported` };
  const path =
    service === undefined
      ? { type: "PathPrefix", value: "/" }
      : method === undefined
        ? { type: "PathPrefix", value: `/${service}` }
        : { type: "Exact", value: `/${service}/${method}` };
  return { ok: true, match: { path, headers: match.headers ?? [] } };
}

/**
 * One GRPCRouteRule → store rule, through the HTTPRoute rule translation (rules.ts): the same filters (those
 * GRPCRoute defines), backendRefs with weights and their own filters, ReferenceGrants from GRPCRoute. A rule
 * without matches matches every call.
 */
export function translateGrpcRule(
  rule: GrpcRule,
  namespace: string,
  context: BackendContext,
): RuleTranslation {
  const matches: KubeMatch[] = [];
  for (const match of rule.matches ?? []) {
    const translated = grpcMatchAsHttp(match);
    if (!translated.ok) return { ok: false, reason: "UnsupportedValue", message: translated.error };
    matches.push(translated.match);
  }
  const filters = [...(rule.filters ?? []), ...(rule.backendRefs ?? []).flatMap((ref) => ref.filters ?? [])];
  const unknown = filters.find((filter) => !GRPC_FILTERS.has(filter.type));
  if (unknown) {
    return { ok: false, reason: "UnsupportedValue", message: `filter type ${unknown.type} is not supported` };
  }
  const httpRule: KubeRule = {
    matches,
    filters: rule.filters ?? [],
    backendRefs: rule.backendRefs ?? [],
  };
  const translated = translateRule(httpRule, namespace, context, "GRPCRoute");
  if (!translated.ok) return translated;
  const ignored = [...translated.ignored];
  if (rule.sessionPersistence) ignored.push("sessionPersistence");
  // Copies go over HTTP/1.1 without a body (routes/mirrors.ts): a gRPC call is never copied.
  if ((rule.filters ?? []).some((filter) => filter.type === "RequestMirror"))
    ignored.push("RequestMirror filters");
  return ignored.length === translated.ignored.length ? translated : { ...translated, ignored };
}

/** GRPCRoute for the route translation (http-route.ts translateRouteOfKind). */
export const GRPC_ROUTE_KIND: RouteKindSpec<GrpcRule> = {
  kind: "GRPCRoute",
  source: "grpcroute",
  translateRule: translateGrpcRule,
};
