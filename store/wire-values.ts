import * as v from "valibot";

/**
 * The values of a route record the router writes into a head (a request target, a Location, a Host, a header
 * field): each schema admits only what the wire can carry, so no record can make the router write a space, a
 * line or a query where it does not belong. Shared by the route schema (routes.ts) and the filters (filters/).
 */

export const PortNumberSchema = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535));
/**
 * A path the router puts into a request target or a Location (URLRewrite, RequestRedirect): RFC 3986 path
 * characters and percent-encodings only, so no value can add a space, a line or a query to the head it goes in.
 */
export const TargetPathSchema = v.pipe(
  v.string(),
  v.maxLength(1024),
  v.regex(/^\/(?:[-A-Za-z0-9._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/, "path of characters RFC 3986 allows"),
);
/** RFC 9110 §5.1 field-name token, stored lower-case. */
export const HeaderNameSchema = v.pipe(
  v.string(),
  v.regex(/^[!#$%&'*+.^_`|~0-9a-z-]{1,256}$/, "header name"),
);
/** RFC 9110 §5.5 field-value: visible characters, spaces, tabs and obs-text; never CR, LF or NUL. */
export const HeaderValueSchema = v.pipe(
  v.string(),
  v.maxLength(4096),
  v.regex(/^[\t\x20-\x7e\x80-\xff]*$/, "header value"),
);
/** RFC 1035 §2.3.4: a name is at most 253 characters written out; a pattern's `*.` counts too. */
export const MAX_HOST_PATTERN_LENGTH = 253;
const HOST_NAME = "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*";
/** A host name, or `*.` followed by one (see RouteRecord.wildcard for what the `*` covers). */
export const HostPatternSchema = v.pipe(
  v.string(),
  v.maxLength(MAX_HOST_PATTERN_LENGTH),
  v.regex(new RegExp(`^(\\*\\.)?${HOST_NAME}$`), "host name"),
);
/** A host name the router sends or redirects to (Gateway API PreciseHostname): no wildcard. */
export const PreciseHostnameSchema = v.pipe(
  v.string(),
  v.maxLength(MAX_HOST_PATTERN_LENGTH),
  v.regex(new RegExp(`^${HOST_NAME}$`), "host name without a wildcard"),
);
