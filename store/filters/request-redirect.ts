import * as v from "valibot";
import { authorityPort } from "../../lib/authority.js";
import type { Result } from "../../lib/result.js";
import { PortNumberSchema, PreciseHostnameSchema } from "../wire-values.js";
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

/** RequestRedirect (HTTPRequestRedirectFilter): answered by the router itself, no backend called. */

const text = v.nullish(v.string());
/** HTTPRequestRedirectFilter as the API server sends it. */
export const GatewayRedirectSchema = v.looseObject({
  scheme: text,
  hostname: text,
  port: v.nullish(v.number()),
  path: v.nullish(GatewayPathModifierSchema),
  statusCode: v.nullish(v.number()),
});
type GatewayRedirect = v.InferOutput<typeof GatewayRedirectSchema>;

const STATUS_CODES = [301, 302, 303, 307, 308] as const;

/** The record's form: unset fields keep the request's own. */
export const RedirectSchema = v.strictObject({
  scheme: v.optional(v.picklist(["http", "https"])),
  hostname: v.optional(PreciseHostnameSchema),
  port: v.optional(PortNumberSchema),
  path: v.optional(PathModifierSchema),
  statusCode: v.picklist(STATUS_CODES),
});
export type Redirect = v.InferOutput<typeof RedirectSchema>;

const REDIRECT_CODES: ReadonlySet<number> = new Set(STATUS_CODES);

function translateRedirect(redirect: GatewayRedirect): Result<Redirect> {
  const statusCode = redirect.statusCode ?? 302;
  if (!REDIRECT_CODES.has(statusCode))
    return { ok: false, error: `redirect status code ${statusCode} is not supported` };
  const scheme = redirect.scheme ?? undefined;
  if (scheme !== undefined && scheme !== "http" && scheme !== "https") {
    return { ok: false, error: `redirect scheme ${scheme} is not supported` };
  }
  const port = redirect.port ?? undefined;
  if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535)) {
    return { ok: false, error: `redirect port ${port} is not a port number` };
  }
  const hostname = redirect.hostname ? translatePreciseHostname(redirect.hostname) : undefined;
  if (hostname && !hostname.ok) return { ok: false, error: `redirect ${hostname.error}` };
  const path = redirect.path ? translatePathModifier(redirect.path) : undefined;
  if (path && !path.ok) return path;
  return {
    ok: true,
    value: {
      statusCode: statusCode as Redirect["statusCode"],
      ...(scheme ? { scheme } : {}),
      ...(hostname ? { hostname: hostname.value } : {}),
      ...(port !== undefined ? { port } : {}),
      ...(path ? { path: path.value } : {}),
    },
  };
}

export const REQUEST_REDIRECT: FilterKind<"redirect", typeof RedirectSchema, false> = {
  type: "RequestRedirect",
  field: "redirect",
  schema: RedirectSchema,
  translated: "in-order",
  // Read on a backendRef too, where its check refuses it as next to a backend.
  onBackendRef: false,
  translate(filters: readonly GatewayFilter[]) {
    return firstOfType(
      filters,
      "RequestRedirect",
      "requestRedirect",
      GatewayRedirectSchema,
      translateRedirect,
    );
  },
  /** HTTPRequestRedirectFilter: "cannot be used on the same Route rule as a HTTPURLRewrite filter" or with backends. */
  check(filters, rule) {
    const redirect = filters.redirect as Redirect | undefined;
    if (!redirect) return undefined;
    if (filters.rewrite)
      return { reason: "IncompatibleFilters", message: "RequestRedirect together with URLRewrite" };
    if (rule.hasBackends)
      return { reason: "IncompatibleFilters", message: "RequestRedirect together with backendRefs" };
    return checkPrefixMatches(redirect.path, rule);
  },
};

const DEFAULT_PORT = { http: 80, https: 443 } as const;

/** The request a redirect is computed from: the scheme the client used, and its authority and target. */
export interface RedirectInput {
  readonly proto: "http" | "https";
  readonly authority: string;
  /** Lower case, no port (functions/core/http/hosts.ts normaliseHost). */
  readonly host: string;
  readonly path: string;
}

/**
 * The applied form, the Location: unset fields keep the request's own. HTTPRequestRedirectFilter.port:
 * without a port, a redirect that changes the scheme goes to that scheme's well-known port, otherwise to the
 * port the request came to (its Host's, or its scheme's default); a port that is its scheme's default is left
 * out of the Location.
 */
export function redirectLocation(redirect: Redirect, request: RedirectInput, match: MatchedBy): string {
  const scheme = redirect.scheme ?? request.proto;
  const port =
    redirect.port ??
    (redirect.scheme !== undefined
      ? DEFAULT_PORT[redirect.scheme]
      : (authorityPort(request.authority) ?? DEFAULT_PORT[request.proto]));
  const host = redirect.hostname ?? request.host;
  const path = redirect.path ? modifiedPath(request.path, match, redirect.path) : request.path;
  return `${scheme}://${host}${port === DEFAULT_PORT[scheme] ? "" : `:${port}`}${path}`;
}
