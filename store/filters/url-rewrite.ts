import * as v from "valibot";
import type { Result } from "../../lib/result.js";
import { PreciseHostnameSchema } from "../wire-values.js";
import { type FilterKind, firstOfType, type GatewayFilter } from "./filter-kind.js";
import { translatePreciseHostname } from "./hostname.js";
import {
  checkPrefixMatches,
  GatewayPathModifierSchema,
  type MatchedBy,
  modifiedPath,
  PathModifierSchema,
  translatePathModifier,
} from "./path-modifier.js";

/** URLRewrite (HTTPURLRewriteFilter): the path and Host sent upstream. */

/** HTTPURLRewriteFilter as the API server sends it. */
export const GatewayRewriteSchema = v.looseObject({
  hostname: v.nullish(v.string()),
  path: v.nullish(GatewayPathModifierSchema),
});
type GatewayRewrite = v.InferOutput<typeof GatewayRewriteSchema>;

/** The record's form: applied to the request before it is sent to the backend. */
export const RewriteSchema = v.strictObject({
  hostname: v.optional(PreciseHostnameSchema),
  path: v.optional(PathModifierSchema),
});
export type Rewrite = v.InferOutput<typeof RewriteSchema>;

function translateRewrite(rewrite: GatewayRewrite): Result<Rewrite> {
  const hostname = rewrite.hostname ? translatePreciseHostname(rewrite.hostname) : undefined;
  if (hostname && !hostname.ok) return { ok: false, error: `URLRewrite ${hostname.error}` };
  const path = rewrite.path ? translatePathModifier(rewrite.path) : undefined;
  if (path && !path.ok) return path;
  return {
    ok: true,
    value: {
      ...(hostname ? { hostname: hostname.value } : {}),
      ...(path ? { path: path.value } : {}),
    },
  };
}

export const URL_REWRITE: FilterKind<"rewrite", typeof RewriteSchema, true> = {
  type: "URLRewrite",
  field: "rewrite",
  schema: RewriteSchema,
  translated: "in-order",
  // HTTPRouteBackendURLRewrite: a backendRef's rewrite applies after the rule's.
  onBackendRef: true,
  translate(filters: readonly GatewayFilter[]) {
    return firstOfType(filters, "URLRewrite", "urlRewrite", GatewayRewriteSchema, translateRewrite);
  },
  check(filters, rule) {
    return checkPrefixMatches((filters.rewrite as Rewrite | undefined)?.path, rule);
  },
};

/**
 * The applied form: the path (origin-form, query kept) and the Host sent upstream, by the rule's rewrite, then
 * the chosen backendRef's, each field the backend's rewrite sets replacing the rule's
 * (HTTPRouteBackendURLRewrite). Two functions, so that a request allocates nothing for them.
 */
export function rewrittenPath(
  path: string,
  match: MatchedBy,
  rule: Rewrite | undefined,
  backend: Rewrite | undefined,
): string {
  const pathRewrite = backend?.path ?? rule?.path;
  return pathRewrite ? modifiedPath(path, match, pathRewrite) : path;
}

export function rewrittenHost(rule: Rewrite | undefined, backend: Rewrite | undefined): string | undefined {
  return backend?.hostname ?? rule?.hostname;
}
