import type { HeaderMatch, PathMatch, RouteMatch } from "../../../store/routes.js";

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
}

/** The path without its query. */
export function pathOf(target: string): string {
  const query = target.indexOf("?");
  return query < 0 ? target : target.slice(0, query);
}

/**
 * A PathPrefix value without its trailing slashes: Gateway API HTTPPathMatch says "a trailing `/` is
 * ignored", and Ingress `Prefix` matches element-wise the same way, so `/abc/` and `/abc` are one prefix.
 */
export function normalisePathPrefix(value: string): string {
  if (value.length <= 1 || !value.endsWith("/")) return value;
  const trimmed = value.replace(/\/+$/, "");
  return trimmed === "" ? "/" : trimmed;
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

/** One HTTPRouteMatch: path, method and headers must all hold. `path` is already without its query. */
export function requestMatches(match: RouteMatch, path: string, request: RequestFacts): boolean {
  if (!pathMatches(match.path, path)) return false;
  if (match.method !== undefined && match.method !== request.method) return false;
  return headersMatch(match.headers, request.headers);
}
