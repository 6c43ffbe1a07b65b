import * as v from "valibot";
import type { Result } from "../../../lib/result.js";
import { GatewayHeaderModifierSchema } from "../../../store/filters/header-modifier.js";
import { GatewayRedirectSchema } from "../../../store/filters/request-redirect.js";
import { GatewayRewriteSchema } from "../../../store/filters/url-rewrite.js";

/**
 * The parts of GatewayClass, Gateway, HTTPRoute (gateway.networking.k8s.io/v1) and ReferenceGrant (v1 or
 * v1beta1) that edgeslice reads, validated at the boundary. Objects are loose and enums are plain strings:
 * an enum value this version does not know must become an `UnsupportedValue` condition, not a parse
 * failure (HTTPRouteFilter.type). `null` and absent are alike. Defaults of the CRD (v1.6.1 standard) are
 * applied by the translation, so manifests read from a folder behave as the API server would store them.
 */
export const GATEWAY_GROUP = "gateway.networking.k8s.io";

/** The route kinds translated into route records: HTTPRoute, GRPCRoute (grpc-route.ts), TLSRoute (tls-route.ts). */
export type RouteKindName = "HTTPRoute" | "GRPCRoute" | "TLSRoute";

const NameSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(253));
const StringMapSchema = v.nullish(v.record(v.string(), v.string()));
const text = v.nullish(v.string());
const number = v.nullish(v.number());

/** `creationTimestamp` is a string in raw JSON and a Date from client-node's typed APIs. */
export const ObjectMetaSchema = v.looseObject({
  name: NameSchema,
  namespace: v.nullish(NameSchema),
  generation: number,
  creationTimestamp: v.nullish(v.union([v.string(), v.date()])),
  labels: StringMapSchema,
  annotations: StringMapSchema,
});
export type ObjectMeta = v.InferOutput<typeof ObjectMetaSchema>;

export const LabelSelectorSchema = v.looseObject({
  matchLabels: StringMapSchema,
  matchExpressions: v.nullish(
    v.array(v.looseObject({ key: v.string(), operator: v.string(), values: v.nullish(v.array(v.string())) })),
  ),
});
export type LabelSelector = v.InferOutput<typeof LabelSelectorSchema>;

export const GatewayClassSchema = v.looseObject({
  metadata: ObjectMetaSchema,
  spec: v.looseObject({ controllerName: v.string(), parametersRef: v.nullish(v.looseObject({})) }),
});
export type GatewayClass = v.InferOutput<typeof GatewayClassSchema>;

const RouteGroupKindSchema = v.looseObject({ group: text, kind: v.string() });

const ListenerSchema = v.looseObject({
  name: v.string(),
  hostname: text,
  port: v.number(),
  protocol: v.string(),
  tls: v.nullish(
    v.looseObject({
      mode: text,
      certificateRefs: v.nullish(
        v.array(v.looseObject({ group: text, kind: text, name: v.string(), namespace: text })),
      ),
    }),
  ),
  allowedRoutes: v.nullish(
    v.looseObject({
      namespaces: v.nullish(v.looseObject({ from: text, selector: v.nullish(LabelSelectorSchema) })),
      kinds: v.nullish(v.array(RouteGroupKindSchema)),
    }),
  ),
});
export type Listener = v.InferOutput<typeof ListenerSchema>;

export const GatewaySchema = v.looseObject({
  metadata: ObjectMetaSchema,
  spec: v.looseObject({
    gatewayClassName: v.string(),
    listeners: v.array(ListenerSchema),
    addresses: v.nullish(v.array(v.looseObject({ type: text, value: text }))),
  }),
});
export type Gateway = v.InferOutput<typeof GatewaySchema>;

export const ParentRefSchema = v.looseObject({
  group: text,
  kind: text,
  namespace: text,
  name: v.string(),
  sectionName: text,
  port: number,
});
export type ParentRef = v.InferOutput<typeof ParentRefSchema>;

/**
 * HTTPRouteFilter (and GRPCRouteFilter): each kind's field checked with the route object by the schema its
 * module declares (store/filters/); RequestMirror and CORS are checked when their rule is translated, so a bad
 * one drops that rule only.
 */
export const FilterSchema = v.looseObject({
  type: v.string(),
  requestHeaderModifier: v.nullish(GatewayHeaderModifierSchema),
  responseHeaderModifier: v.nullish(GatewayHeaderModifierSchema),
  requestRedirect: v.nullish(GatewayRedirectSchema),
  urlRewrite: v.nullish(GatewayRewriteSchema),
});
export type KubeFilter = v.InferOutput<typeof FilterSchema>;

/** A header or query parameter match (HTTPHeaderMatch, HTTPQueryParamMatch, GRPCHeaderMatch): one shape. */
export const NameValueMatchSchema = v.looseObject({ type: text, name: v.string(), value: v.string() });

const MatchSchema = v.looseObject({
  path: v.nullish(v.looseObject({ type: text, value: text })),
  headers: v.nullish(v.array(NameValueMatchSchema)),
  queryParams: v.nullish(v.array(NameValueMatchSchema)),
  method: text,
});
export type KubeMatch = v.InferOutput<typeof MatchSchema>;

export const BackendRefSchema = v.looseObject({
  group: text,
  kind: text,
  name: v.string(),
  namespace: text,
  port: number,
  weight: number,
  filters: v.nullish(v.array(FilterSchema)),
});
export type KubeBackendRef = v.InferOutput<typeof BackendRefSchema>;

const RuleSchema = v.looseObject({
  name: text,
  matches: v.nullish(v.array(MatchSchema)),
  filters: v.nullish(v.array(FilterSchema)),
  backendRefs: v.nullish(v.array(BackendRefSchema)),
  timeouts: v.nullish(v.unknown()),
  /** HTTPRouteRetry, experimental channel: the standard CRDs prune it, so only experimental clusters send it. */
  retry: v.nullish(v.unknown()),
});
export type KubeRule = v.InferOutput<typeof RuleSchema>;

/**
 * The object of a route kind around the rule of its own: every xRoute of the Gateway API (HTTPRoute, GRPCRoute,
 * TLSRoute) shares its metadata, `spec.parentRefs` and `spec.hostnames` (CommonRouteSpec) and differs only in
 * what a rule holds.
 */
export function routeObjectSchema<RuleSchema extends v.GenericSchema>(ruleSchema: RuleSchema) {
  return v.looseObject({
    metadata: ObjectMetaSchema,
    spec: v.looseObject({
      parentRefs: v.nullish(v.array(ParentRefSchema)),
      hostnames: v.nullish(v.array(v.string())),
      rules: v.nullish(v.array(ruleSchema)),
    }),
  });
}

export const HTTPRouteSchema = routeObjectSchema(RuleSchema);
export type HTTPRoute = v.InferOutput<typeof HTTPRouteSchema>;

export const ReferenceGrantSchema = v.looseObject({
  metadata: ObjectMetaSchema,
  spec: v.looseObject({
    from: v.array(v.looseObject({ group: v.string(), kind: v.string(), namespace: v.string() })),
    to: v.array(v.looseObject({ group: v.string(), kind: v.string(), name: text })),
  }),
});
export type ReferenceGrant = v.InferOutput<typeof ReferenceGrantSchema>;

/** Namespaces are read for their labels only (listener `allowedRoutes.namespaces.selector`). */
export const NamespaceSchema = v.looseObject({ metadata: ObjectMetaSchema });
export type Namespace = v.InferOutput<typeof NamespaceSchema>;

export function parseWith<T>(schema: v.GenericSchema<unknown, T>, input: unknown): Result<T> {
  const result = v.safeParse(schema, input);
  if (result.success) return { ok: true, value: result.output };
  const issue = result.issues[0];
  const path = issue ? v.getDotPath(issue) : null;
  return { ok: false, error: `${path ?? "(root)"}: ${issue?.message ?? "invalid"}` };
}

export const parseGatewayClass = (input: unknown) => parseWith(GatewayClassSchema, input);
export const parseGateway = (input: unknown) => parseWith(GatewaySchema, input);
export const parseHTTPRoute = (input: unknown) => parseWith(HTTPRouteSchema, input);
export const parseReferenceGrant = (input: unknown) => parseWith(ReferenceGrantSchema, input);
export const parseNamespace = (input: unknown) => parseWith(NamespaceSchema, input);

/** `metadata.namespace`, defaulting as the API server does. */
export function namespaceOf(object: { metadata: ObjectMeta }): string {
  return object.metadata.namespace ?? "default";
}

/** `namespace/name`: the key of a namespaced object in every map this translation returns. */
export function keyOf(object: { metadata: ObjectMeta }): string {
  return `${namespaceOf(object)}/${object.metadata.name}`;
}

/** metadata.creationTimestamp in ms; 0 (oldest) when absent or unreadable, so the result stays deterministic. */
export function creationTimeOf(metadata: ObjectMeta): number {
  const stamp = metadata.creationTimestamp;
  if (stamp === null || stamp === undefined) return 0;
  const ms = stamp instanceof Date ? stamp.getTime() : Date.parse(stamp);
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}
