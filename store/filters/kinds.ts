import * as v from "valibot";
import { CORS } from "./cors.js";
import type { AnyFilterKind } from "./filter-kind.js";
import { REQUEST_HEADER_MODIFIER, RESPONSE_HEADER_MODIFIER } from "./header-modifier.js";
import { REQUEST_MIRROR } from "./request-mirror.js";
import { REQUEST_REDIRECT } from "./request-redirect.js";
import { URL_REWRITE } from "./url-rewrite.js";

/**
 * The filter kinds edgeslice carries, in the order of their fields in a record (and so of the record's bytes:
 * routers of the previous version read them). A type not listed (ExtensionRef, or one newer than this
 * version) drops its rule: HTTPRouteFilter.type says an unresolved filter "MUST NOT be skipped".
 */
export const FILTER_KINDS = [
  REQUEST_HEADER_MODIFIER,
  RESPONSE_HEADER_MODIFIER,
  REQUEST_REDIRECT,
  URL_REWRITE,
  REQUEST_MIRROR,
  CORS,
] as const;

type Kinds = (typeof FILTER_KINDS)[number];
type OptionalFields<Of extends AnyFilterKind> = {
  [Kind in Of as Kind["field"]]: v.OptionalSchema<Kind["schema"], undefined>;
};

/** Each kind's field, optional, in the order of `kinds`. */
function optionalFields<Of extends AnyFilterKind>(kinds: readonly Of[]): OptionalFields<Of> {
  return Object.fromEntries(kinds.map((kind) => [kind.field, v.optional(kind.schema)])) as OptionalFields<Of>;
}

/**
 * A rule's filters in a record. Strict: a router that predates a kind skips the record rather than serve the
 * rule without it (an unknown filter "MUST NOT be skipped").
 */
export const RouteFiltersSchema = v.strictObject(optionalFields(FILTER_KINDS));
export type RouteFilters = v.InferOutput<typeof RouteFiltersSchema>;

type BackendRefKinds = Extract<Kinds, { readonly onBackendRef: true }>;

/**
 * HTTPBackendRef.filters: applied after the rule's, "if and only if the request is being forwarded to the
 * backend defined here": header modifiers (BackendRequestHeaderModification) and URLRewrite
 * (HTTPRouteBackendURLRewrite: each of its fields replaces the rule's).
 */
export const BackendFiltersSchema = v.strictObject(
  optionalFields(FILTER_KINDS.filter((kind): kind is BackendRefKinds => kind.onBackendRef)),
);
export type BackendFilters = v.InferOutput<typeof BackendFiltersSchema>;
