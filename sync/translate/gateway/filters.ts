import type { Result } from "../../../lib/result.js";
import type {
  HeaderModifier,
  PathModifier,
  Redirect,
  RouteFilters,
  RouteMatch,
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
      translated.requestHeaders ??= headerModifier(filter.requestHeaderModifier);
    } else if (filter.type === "ResponseHeaderModifier" && filter.responseHeaderModifier) {
      translated.responseHeaders ??= headerModifier(filter.responseHeaderModifier);
    } else if (filter.type === "RequestRedirect" && filter.requestRedirect) {
      const redirect = filter.requestRedirect;
      const statusCode = redirect.statusCode ?? 302;
      if (!REDIRECT_CODES.has(statusCode))
        return failed(`redirect status code ${statusCode} is not supported`);
      const scheme = redirect.scheme ?? undefined;
      if (scheme !== undefined && scheme !== "http" && scheme !== "https") {
        return failed(`redirect scheme ${scheme} is not supported`);
      }
      const path = redirect.path ? pathModifier(redirect.path) : undefined;
      if (path && !path.ok) return failed(path.error);
      translated.redirect ??= {
        statusCode: statusCode as Redirect["statusCode"],
        ...(scheme ? { scheme } : {}),
        ...(redirect.hostname ? { hostname: redirect.hostname.toLowerCase() } : {}),
        ...(redirect.port ? { port: redirect.port } : {}),
        ...(path ? { path: path.value } : {}),
      };
    } else if (filter.type === "URLRewrite" && filter.urlRewrite) {
      const rewrite = filter.urlRewrite;
      const path = rewrite.path ? pathModifier(rewrite.path) : undefined;
      if (path && !path.ok) return failed(path.error);
      translated.rewrite ??= {
        ...(rewrite.hostname ? { hostname: rewrite.hostname.toLowerCase() } : {}),
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

/** Header names are case-insensitive (RFC 9110 §5.1): stored lower-case. */
function headerModifier(modifier: KubeHeaderModifier): HeaderModifier {
  const pair = (item: { name: string; value: string }) => ({
    name: item.name.toLowerCase(),
    value: item.value,
  });
  return {
    set: (modifier.set ?? []).map(pair),
    add: (modifier.add ?? []).map(pair),
    remove: (modifier.remove ?? []).map((name) => name.toLowerCase()),
  };
}

/**
 * HTTPPathModifier. An empty replacePrefixMatch is stored as "/": both mean "drop the matched prefix", and
 * the router joins the rest without doubling the slash.
 */
function pathModifier(modifier: KubePathModifier): Result<PathModifier> {
  if (modifier.type === "ReplaceFullPath" && typeof modifier.replaceFullPath === "string") {
    const value = modifier.replaceFullPath === "" ? "/" : modifier.replaceFullPath;
    if (!value.startsWith("/")) return { ok: false, error: `replaceFullPath "${value}" must start with /` };
    return { ok: true, value: { type: "ReplaceFullPath", value } };
  }
  if (modifier.type === "ReplacePrefixMatch" && typeof modifier.replacePrefixMatch === "string") {
    const value = modifier.replacePrefixMatch === "" ? "/" : modifier.replacePrefixMatch;
    if (!value.startsWith("/"))
      return { ok: false, error: `replacePrefixMatch "${value}" must start with /` };
    return { ok: true, value: { type: "ReplacePrefixMatch", value } };
  }
  return { ok: false, error: `path modifier ${modifier.type} is not supported` };
}
