import type { RouterError } from "../core/http/errors.js";
import { REQUEST_ID_HEADER } from "../core/http/request-id.js";

/**
 * Header fields a request may have; one more is a 431. http.Server silently drops the fields past its
 * `maxHeadersCount`, so a Content-Length or second Host there would frame a body the router never saw: the
 * server keeps one more than this (SERVER_MAX_HEADERS_COUNT), and a request that reaches it is refused.
 */
export const MAX_REQUEST_HEADERS = 2_000;
export const SERVER_MAX_HEADERS_COUNT = MAX_REQUEST_HEADERS + 1;

/**
 * A request head as Node gives it (`rawHeaders`: name, value, ...), read in one pass for the facts taken before
 * routing; the header lookup of route matching is indexed by lower-case name when a route first asks, so a
 * request costs one more pass at most. Repeated fields are joined by ", ", as a fetch Headers joins them.
 */
export class RequestHead {
  readonly rawHeaders: readonly string[];
  /** Why the head is refused before routing; undefined when it may go on. */
  readonly problem: RouterError | undefined;
  /** The first Host field's value (`problem` refuses a second); undefined when absent or empty. */
  readonly host: string | undefined;
  /** The one X-Request-Id; undefined when absent or sent twice (a new id is better than a guess). */
  readonly requestId: string | undefined;
  /** Every Connection field's value joined by ", " (core/http/hop-by-hop.ts reads it); undefined when none. */
  readonly connection: string | undefined;
  #byName: Map<string, string> | undefined;

  constructor(rawHeaders: readonly string[]) {
    this.rawHeaders = rawHeaders;
    let hosts = 0;
    let host: string | undefined;
    let requestIds = 0;
    let requestId: string | undefined;
    let connection: string | undefined;
    // Names are compared by length first: only a field of the right length is lower-cased.
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i] as string;
      const length = name.length;
      if (length === 4 && name.toLowerCase() === "host") {
        if (++hosts === 1) host = rawHeaders[i + 1] || undefined;
      } else if (length === 10 && name.toLowerCase() === "connection") {
        const value = rawHeaders[i + 1] ?? "";
        connection = connection === undefined ? value : `${connection}, ${value}`;
      } else if (length === 12 && name.toLowerCase() === REQUEST_ID_HEADER && ++requestIds === 1) {
        requestId = rawHeaders[i + 1];
      }
    }
    // RFC 9112 §3.2: a second Host is a 400 (Node keeps the first; a backend reading the last could disagree).
    if (rawHeaders.length / 2 > MAX_REQUEST_HEADERS) this.problem = "too_many_headers";
    else this.problem = hosts > 1 ? "bad_request" : undefined;
    this.host = host;
    this.requestId = requestIds === 1 ? requestId : undefined;
    this.connection = connection;
  }

  /** The value of the fields named `name` (lower case), joined; null when there is none. */
  get(name: string): string | null {
    if (this.#byName === undefined) {
      const raw = this.rawHeaders;
      this.#byName = new Map();
      for (let i = 0; i < raw.length; i += 2) {
        const key = (raw[i] as string).toLowerCase();
        const value = raw[i + 1] ?? "";
        const before = this.#byName.get(key);
        this.#byName.set(key, before === undefined ? value : `${before}, ${value}`);
      }
    }
    return this.#byName.get(name) ?? null;
  }
}
