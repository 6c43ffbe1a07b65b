import type { RouterError } from "../core/errors.js";

/**
 * Header fields the Node router reads per request; one more makes the request 431. http.Server keeps only
 * `maxHeadersCount` fields (2,000 by default) and drops the rest silently, so a Content-Length, Transfer-Encoding
 * or second Host past that line would be invisible to the router while Node still frames the body by it: the
 * body was dropped on the way to the backend. The server keeps one more than this, and a request that reaches
 * it is refused rather than forwarded half-read.
 */
export const MAX_REQUEST_HEADERS = 2_000;

/** What http.Server's `maxHeadersCount` is set to: enough to tell "exactly the limit" from "over it". */
export const SERVER_MAX_HEADERS_COUNT = MAX_REQUEST_HEADERS + 1;

/**
 * Why a request head must be refused before routing, from Node's `rawHeaders`; undefined when it may go on.
 * RFC 9112 §3.2: more than one Host field line is a 400 (Node's `headers.host` keeps the first and drops the
 * others, so the router and a backend reading the last could disagree on the host).
 */
export function requestHeadProblem(rawHeaders: readonly string[]): RouterError | undefined {
  if (rawHeaders.length > 2 * MAX_REQUEST_HEADERS) return "too_many_headers";
  let hosts = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name !== undefined && name.length === 4 && name.toLowerCase() === "host" && ++hosts > 1) {
      return "bad_request";
    }
  }
  return undefined;
}

/**
 * A header lookup over Node's `rawHeaders` for route matching, read only when a route matches on headers (no
 * header object is built per request): repeated fields joined by ", ", as a fetch Headers joins them.
 */
export function rawHeaderLookup(rawHeaders: readonly string[]): { get(name: string): string | null } {
  return {
    get(name) {
      let value: string | null = null;
      for (let i = 0; i < rawHeaders.length; i += 2) {
        const field = rawHeaders[i];
        if (field === undefined || field.length !== name.length || field.toLowerCase() !== name) continue;
        const item = rawHeaders[i + 1] ?? "";
        value = value === null ? item : `${value}, ${item}`;
      }
      return value;
    },
  };
}
