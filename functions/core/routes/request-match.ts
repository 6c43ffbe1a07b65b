import { normalisePathPrefix } from "../../../store/paths.js";
import type { HeaderMatch, PathMatch, QueryParamMatch, RouteMatch } from "../../../store/routes.js";

/** What the matcher reads of a request besides its host. */
export interface RequestFacts {
  /** The origin-form path as received (not decoded); anything from "?" on is ignored. */
  readonly path: string;
  /** The request method, compared case-sensitively (RFC 9110 §9.1). */
  readonly method: string;
  /** Header lookup by lower-case name; a fetch `Headers` fits (repeated fields come joined by ", "). */
  readonly headers: { get(name: string): string | null | undefined };
  /**
   * The port the client addressed: the Host's (or absolute target's) port; undefined when it names none,
   * which is the scheme's default (listener-ports.ts).
   */
  readonly port?: number | undefined;
  /**
   * The name the client's TLS handshake asked for (SNI, lower case); undefined in cleartext or without SNI.
   * On TLS the listener is the one the SNI chose, not the Host's (Gateway API Listener.hostname: "For HTTPS
   * and TLS protocol listeners, this value MUST match the SNI"), so a Host other than the SNI's is served only
   * by the routes of the SNI's listener (official HTTPRouteHTTPSListener: unknown SNI, known Host: 404).
   */
  readonly serverName?: string | undefined;
}

/**
 * Element-wise prefix match: `/abc` matches `/abc`, `/abc/` and `/abc/def`, never `/abcd`
 * (Gateway API HTTPPathMatch PathPrefix; networking.k8s.io/v1 HTTPIngressPath `Prefix`).
 * `prefix` must already be normalised.
 */
export function hasPathPrefix(path: string, prefix: string): boolean {
  if (prefix === "/") return path.startsWith("/");
  if (!path.startsWith(prefix)) return false;
  return path.length === prefix.length || path.charCodeAt(prefix.length) === 47 /* / */;
}

/** Exact compares the whole path, a trailing slash included; PathPrefix matches whole elements. */
export function pathMatches(match: PathMatch, path: string): boolean {
  if (match.type === "Exact") return path === match.value;
  return hasPathPrefix(path, normalisePathPrefix(match.value));
}

/** Every header present with exactly this value; names are stored lower-case and looked up so. */
export function headersMatch(wanted: readonly HeaderMatch[], headers: RequestFacts["headers"]): boolean {
  for (const header of wanted) {
    if (headers.get(header.name) !== header.value) return false;
  }
  return true;
}

/**
 * Every query parameter present with exactly this value: names case-sensitive, both percent-decoded ("+" is
 * not a space in RFC 3986). A parameter given twice is read at its first occurrence, which the spec leaves
 * to the implementation. `target` is the origin-form target with its query.
 */
export function queryParamsMatch(wanted: readonly QueryParamMatch[], target: string): boolean {
  const start = target.indexOf("?");
  if (start < 0) return false;
  const found = new Map<string, string>();
  for (const pair of target.slice(start + 1).split("&")) {
    const equals = pair.indexOf("=");
    const name = decoded(equals < 0 ? pair : pair.slice(0, equals));
    if (name !== undefined && !found.has(name))
      found.set(name, decoded(equals < 0 ? "" : pair.slice(equals + 1)) ?? "");
  }
  return wanted.every((param) => found.get(param.name) === param.value);
}

function decoded(text: string): string | undefined {
  if (!text.includes("%")) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** One HTTPRouteMatch: path, method, headers and query parameters must all hold. */
export function requestMatches(match: RouteMatch, path: string, request: RequestFacts): boolean {
  if (!pathMatches(match.path, path)) return false;
  if (match.method !== undefined && match.method !== request.method) return false;
  if (match.queryParams !== undefined && !queryParamsMatch(match.queryParams, request.path)) return false;
  return headersMatch(match.headers, request.headers);
}
