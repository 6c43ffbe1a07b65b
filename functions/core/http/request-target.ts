import type { RouterError } from "./errors.js";
import { isHostSyntax, normaliseHost } from "./hosts.js";

/**
 * The request target as routing reads it: the authority and origin-form path of the URL the runtime built,
 * and what is refused before any snapshot is looked at (a target that cannot be read, the admin prefix, a Host
 * that is not one).
 */

/** The router's own endpoints (app/admin.ts); nothing under this prefix is ever proxied. */
export const ADMIN_PREFIX = "/_edgeslice";

/**
 * Whether an origin-form path is under the admin prefix as Hono matches it: on the path without its query,
 * percent-decoded the way decodeURI does (so `/%5Fedgeslice/x` is reserved, `/_edgeslice%2Fx` is not).
 */
export function isAdminPath(path: string): boolean {
  const query = path.indexOf("?");
  let only = query < 0 ? path : path.slice(0, query);
  if (only.includes("%")) {
    try {
      only = decodeURI(only);
    } catch {
      // Not decodable: Hono matches the raw path too.
    }
  }
  return only === ADMIN_PREFIX || only.startsWith(`${ADMIN_PREFIX}/`);
}

export interface RequestTarget {
  readonly proto: "http" | "https";
  /** Host[:port] the request was made to (Host header, or an absolute-form target's authority). */
  readonly authority: string;
  /** Origin form: path and query, dot segments resolved. */
  readonly path: string;
}

const SUSPICIOUS = /[@\\]|%2e|\/\.\.?(?:[/?#]|$)/i;

/**
 * The routed authority and origin-form path, taken from the request URL the runtime built (both Node's
 * adapter and Workers resolve dot segments, %2e included, per the WHATWG URL standard). Anything unusual
 * goes through the URL parser again, so a path the router matched is exactly the path the backend gets.
 */
export function requestTarget(url: string): RequestTarget | undefined {
  let proto: "http" | "https";
  let rest: string;
  if (url.startsWith("http://")) {
    proto = "http";
    rest = url.slice(7);
  } else if (url.startsWith("https://")) {
    proto = "https";
    rest = url.slice(8);
  } else return undefined;
  if (SUSPICIOUS.test(rest)) return parsedTarget(url, proto);
  const slash = rest.indexOf("/");
  const hash = rest.indexOf("#");
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  let path = slash < 0 ? "/" : rest.slice(slash);
  if (hash >= 0) path = path.slice(0, path.indexOf("#"));
  if (authority === "") return undefined;
  return { proto, authority, path };
}

function parsedTarget(url: string, proto: "http" | "https"): RequestTarget | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.host === "") return undefined;
  return { proto, authority: parsed.host, path: `${parsed.pathname}${parsed.search}` };
}

export interface CheckedTarget {
  readonly target: RequestTarget;
  /** The target's authority, normalised (hosts.ts). */
  readonly host: string;
}

/** What routing refuses before it looks at any snapshot: a target it cannot read, the admin prefix, a bad Host. */
export function checkedTarget(url: string): CheckedTarget | RouterError {
  const target = requestTarget(url);
  if (!target) return "bad_request";
  // The admin prefix is the router's own (Hono serves it before the catch-all); never proxied.
  if (isAdminPath(target.path)) return "no_route";
  const host = normaliseHost(target.authority);
  if (host === undefined) return "no_route";
  if (!isHostSyntax(host)) return "bad_request";
  return { target, host };
}
