import { HTTP_METHODS } from "../../../lib/http-methods.js";
import type { Result } from "../../../lib/result.js";
import { MATCH_EVERYTHING, type RouteMatch } from "../../../store/routes.js";
import type { KubeMatch } from "./objects.js";

/** Gateway API path characters for Exact and PathPrefix (the CRD's CEL rule: RFC 3986 pchar and "/"). */
const PATH = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})+$/;
const METHODS: ReadonlySet<string> = new Set(HTTP_METHODS);

/**
 * HTTPRouteMatch → store match. Defaults as the CRD stores them: path PathPrefix "/", header type Exact.
 * Refused (the rule is dropped, UnsupportedValue): RegularExpression paths, headers or query parameters
 * (implementation-specific; ignoring them would widen what the rule matches), and methods outside the enum.
 */
export function translateMatch(match: KubeMatch): Result<RouteMatch> {
  const type = match.path?.type ?? "PathPrefix";
  const value = match.path?.value ?? "/";
  if (type !== "Exact" && type !== "PathPrefix") {
    return { ok: false, error: `path match type ${type} is not supported` };
  }
  const pathProblem = pathValueProblem(value);
  if (pathProblem) return { ok: false, error: `path "${value}" ${pathProblem}` };
  const headers: RouteMatch["headers"] = [];
  const seen = new Set<string>();
  for (const header of match.headers ?? []) {
    const headerType = header.type ?? "Exact";
    if (headerType !== "Exact")
      return { ok: false, error: `header match type ${headerType} is not supported` };
    const name = header.name.toLowerCase();
    // HTTPHeaderMatch.name: "only the first entry with an equivalent name MUST be considered for a match".
    if (seen.has(name)) continue;
    seen.add(name);
    headers.push({ name, value: header.value });
  }
  const queryParams: { name: string; value: string }[] = [];
  for (const param of match.queryParams ?? []) {
    const paramType = param.type ?? "Exact";
    if (paramType !== "Exact")
      return { ok: false, error: `query parameter match type ${paramType} is not supported` };
    // HTTPQueryParamMatch.name: "only the first entry with an equivalent name MUST be considered".
    if (!queryParams.some((known) => known.name === param.name))
      queryParams.push({ name: param.name, value: param.value });
  }
  const method = match.method ?? undefined;
  if (method !== undefined && !METHODS.has(method))
    return { ok: false, error: `method ${method} is not supported` };
  const path = { type, value: type === "PathPrefix" ? withoutTrailingSlash(value) : value } as const;
  const translated: RouteMatch = queryParams.length > 0 ? { path, headers, queryParams } : { path, headers };
  return {
    ok: true,
    value: method === undefined ? translated : { ...translated, method: method as RouteMatch["method"] },
  };
}

/** A rule without matches matches every request ("a prefix path match on /"). */
export function translateMatches(matches: readonly KubeMatch[] | null | undefined): Result<RouteMatch[]> {
  if (!matches || matches.length === 0) return { ok: true, value: [MATCH_EVERYTHING] };
  const translated: RouteMatch[] = [];
  for (const match of matches) {
    const result = translateMatch(match);
    if (!result.ok) return result;
    translated.push(result.value);
  }
  return { ok: true, value: translated };
}

/** The CRD's CEL rules for Exact and PathPrefix values, checked again for objects read from a folder. */
export function pathValueProblem(value: string): string | undefined {
  if (!value.startsWith("/")) return "must start with /";
  if (value.length > 1024) return "is longer than 1024 characters";
  if (!PATH.test(value)) return "holds characters not allowed in a path";
  if (/\/\/|\/\.\.?(\/|$)|%2f|#/i.test(value)) return "holds //, a . or .. segment, or an encoded /";
  return undefined;
}

/** HTTPPathMatch PathPrefix: "When specified, a trailing `/` is ignored." */
function withoutTrailingSlash(value: string): string {
  const trimmed = value.replace(/\/+$/, "");
  return trimmed === "" ? "/" : trimmed;
}
