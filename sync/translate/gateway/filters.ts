import * as v from "valibot";
import type { Result } from "../../../lib/result.js";
import {
  type BackendFilters,
  type HeaderModifier,
  HeaderNameSchema,
  HeaderValueSchema,
  type PathModifier,
  PreciseHostnameSchema,
  type Redirect,
  type RouteFilters,
  type RouteMatch,
  TargetPathSchema,
} from "../../../store/routes.js";
import type { KubeFilter, KubeHeaderModifier, KubePathModifier } from "./objects.js";

const REDIRECT_CODES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export type FilterProblem = {
  readonly reason: "UnsupportedValue" | "IncompatibleFilters";
  readonly message: string;
};

/**
 * HTTPRouteFilter list → store filters. Supported: RequestHeaderModifier, ResponseHeaderModifier,
 * RequestRedirect, URLRewrite. Any other type (RequestMirror, ExtensionRef, CORS, or one this version does
 * not know) drops the rule: HTTPRouteFilter.type says an unresolved filter "MUST NOT be skipped" and an unknown
 * type means UnsupportedValue. RequestRedirect next to backendRefs or URLRewrite is IncompatibleFilters;
 * ReplacePrefixMatch needs PathPrefix matches only (HTTPPathModifier.replacePrefixMatch).
 *
 * Every value the router writes into a head (a path into the request target or Location, a host name, a port,
 * a header name or value) must be one the wire can carry: one that is not would fail each request of the rule
 * at the router, so the rule is dropped and the status quotes the value (as JSON: no raw CR or LF in it).
 */
export function translateFilters(
  filters: readonly KubeFilter[],
  matches: readonly RouteMatch[],
  hasBackends: boolean,
): Result<RouteFilters, FilterProblem> {
  const translated: {
    requestHeaders?: HeaderModifier;
    responseHeaders?: HeaderModifier;
    redirect?: Redirect;
    rewrite?: RouteFilters["rewrite"];
  } = {};
  for (const filter of filters) {
    const failed = (message: string): Result<RouteFilters, FilterProblem> => ({
      ok: false,
      error: { reason: "UnsupportedValue", message },
    });
    if (filter.type === "RequestHeaderModifier" && filter.requestHeaderModifier) {
      const modifier = headerModifier(filter.requestHeaderModifier);
      if (!modifier.ok) return failed(`RequestHeaderModifier ${modifier.error}`);
      translated.requestHeaders ??= modifier.value;
    } else if (filter.type === "ResponseHeaderModifier" && filter.responseHeaderModifier) {
      const modifier = headerModifier(filter.responseHeaderModifier);
      if (!modifier.ok) return failed(`ResponseHeaderModifier ${modifier.error}`);
      translated.responseHeaders ??= modifier.value;
    } else if (filter.type === "RequestRedirect" && filter.requestRedirect) {
      const redirect = filter.requestRedirect;
      const statusCode = redirect.statusCode ?? 302;
      if (!REDIRECT_CODES.has(statusCode))
        return failed(`redirect status code ${statusCode} is not supported`);
      const scheme = redirect.scheme ?? undefined;
      if (scheme !== undefined && scheme !== "http" && scheme !== "https") {
        return failed(`redirect scheme ${scheme} is not supported`);
      }
      const port = redirect.port ?? undefined;
      if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535)) {
        return failed(`redirect port ${port} is not a port number`);
      }
      const hostname = redirect.hostname ? preciseHostname(redirect.hostname) : undefined;
      if (hostname && !hostname.ok) return failed(`redirect ${hostname.error}`);
      const path = redirect.path ? pathModifier(redirect.path) : undefined;
      if (path && !path.ok) return failed(path.error);
      translated.redirect ??= {
        statusCode: statusCode as Redirect["statusCode"],
        ...(scheme ? { scheme } : {}),
        ...(hostname ? { hostname: hostname.value } : {}),
        ...(port !== undefined ? { port } : {}),
        ...(path ? { path: path.value } : {}),
      };
    } else if (filter.type === "URLRewrite" && filter.urlRewrite) {
      const rewrite = filter.urlRewrite;
      const hostname = rewrite.hostname ? preciseHostname(rewrite.hostname) : undefined;
      if (hostname && !hostname.ok) return failed(`URLRewrite ${hostname.error}`);
      const path = rewrite.path ? pathModifier(rewrite.path) : undefined;
      if (path && !path.ok) return failed(path.error);
      translated.rewrite ??= {
        ...(hostname ? { hostname: hostname.value } : {}),
        ...(path ? { path: path.value } : {}),
      };
    } else {
      return failed(`filter ${filter.type} is not supported`);
    }
  }
  const incompatible = (message: string): Result<RouteFilters, FilterProblem> => ({
    ok: false,
    error: { reason: "IncompatibleFilters", message },
  });
  if (translated.redirect && translated.rewrite)
    return incompatible("RequestRedirect together with URLRewrite");
  if (translated.redirect && hasBackends) return incompatible("RequestRedirect together with backendRefs");
  const prefixModifier =
    translated.redirect?.path?.type === "ReplacePrefixMatch" ||
    translated.rewrite?.path?.type === "ReplacePrefixMatch";
  if (prefixModifier && matches.some((match) => match.path.type !== "PathPrefix")) {
    return {
      ok: false,
      error: { reason: "UnsupportedValue", message: "ReplacePrefixMatch needs PathPrefix matches only" },
    };
  }
  return { ok: true, value: translated };
}

/**
 * Header names are case-insensitive (RFC 9110 §5.1): stored lower-case. A name must be a token and a value
 * a field-value (RFC 9110 §5.5: no CR, LF or NUL, nothing past Latin-1).
 */
function headerModifier(modifier: KubeHeaderModifier): Result<HeaderModifier> {
  const names = [...(modifier.set ?? []), ...(modifier.add ?? [])].map((item) => item.name);
  for (const name of [...names, ...(modifier.remove ?? [])]) {
    if (!v.is(HeaderNameSchema, name.toLowerCase())) {
      return { ok: false, error: `header name ${JSON.stringify(name)} is not a field name (RFC 9110 §5.1)` };
    }
  }
  for (const { name, value } of [...(modifier.set ?? []), ...(modifier.add ?? [])]) {
    if (!v.is(HeaderValueSchema, value)) {
      const why = "holds CR, LF, NUL or characters past Latin-1 (RFC 9110 §5.5)";
      return { ok: false, error: `header ${name} value ${JSON.stringify(value)} ${why}` };
    }
  }
  const pair = (item: { name: string; value: string }) => ({
    name: item.name.toLowerCase(),
    value: item.value,
  });
  return {
    ok: true,
    value: {
      set: (modifier.set ?? []).map(pair),
      add: (modifier.add ?? []).map(pair),
      remove: (modifier.remove ?? []).map((name) => name.toLowerCase()),
    },
  };
}

/** A redirect's or rewrite's hostname, lower-cased (Gateway API PreciseHostname: no wildcard). */
function preciseHostname(hostname: string): Result<string> {
  const lower = hostname.toLowerCase();
  if (v.is(PreciseHostnameSchema, lower)) return { ok: true, value: lower };
  return { ok: false, error: `hostname ${JSON.stringify(hostname)} is not a host name without a wildcard` };
}

/**
 * HTTPPathModifier. An empty replacePrefixMatch is stored as "/": both mean "drop the matched prefix", and
 * the router joins the rest without doubling the slash.
 */
function pathModifier(modifier: KubePathModifier): Result<PathModifier> {
  const given =
    modifier.type === "ReplaceFullPath"
      ? modifier.replaceFullPath
      : modifier.type === "ReplacePrefixMatch"
        ? modifier.replacePrefixMatch
        : undefined;
  if (typeof given !== "string")
    return { ok: false, error: `path modifier ${modifier.type} is not supported` };
  const field = modifier.type === "ReplaceFullPath" ? "replaceFullPath" : "replacePrefixMatch";
  const value = given === "" ? "/" : given;
  if (!value.startsWith("/"))
    return { ok: false, error: `${field} ${JSON.stringify(value)} must start with /` };
  if (!v.is(TargetPathSchema, value)) {
    const why = "holds characters a request path cannot carry (RFC 3986: no space, CR, LF, ? or #)";
    return { ok: false, error: `${field} ${JSON.stringify(value)} ${why}` };
  }
  return { ok: true, value: { type: modifier.type as PathModifier["type"], value } };
}

/**
 * HTTPBackendRef.filters → the backend's header modifiers and URLRewrite; any other filter on a backendRef
 * drops the rule, as an unsupported filter on the rule does.
 */
export function translateBackendFilters(
  filters: readonly KubeFilter[],
  matches: readonly RouteMatch[],
): Result<BackendFilters | undefined, FilterProblem> {
  if (filters.length === 0) return { ok: true, value: undefined };
  const translated = translateFilters(filters, matches, true);
  if (!translated.ok) return translated;
  const { requestHeaders, responseHeaders, rewrite, ...others } = translated.value;
  const unsupported = Object.keys(others);
  if (unsupported.length > 0) {
    const message = `filters on a backendRef other than header modifiers and URLRewrite are not supported (${unsupported.join(", ")})`;
    return { ok: false, error: { reason: "UnsupportedValue", message } };
  }
  return {
    ok: true,
    value: {
      ...(requestHeaders ? { requestHeaders } : {}),
      ...(responseHeaders ? { responseHeaders } : {}),
      ...(rewrite ? { rewrite } : {}),
    },
  };
}
