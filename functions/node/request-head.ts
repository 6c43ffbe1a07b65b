import type { RouterError } from "../core/http/errors.js";
import { REQUEST_ID_HEADER } from "../core/http/request-id.js";

/**
 * Header fields the Node router reads per request; one more makes the request 431. http.Server keeps only
 * `maxHeadersCount` fields (2,000 by default) and drops the rest silently, so a Content-Length, Transfer-Encoding
 * or second Host past that line would be invisible to the router while Node still frames the body by it, and
 * the body would be lost on the way to the backend. The server keeps one more than this, and a request that reaches
 * it is refused rather than forwarded half-read.
 */
export const MAX_REQUEST_HEADERS = 2_000;

/** What http.Server's `maxHeadersCount` is set to: enough to tell "exactly the limit" from "over it". */
export const SERVER_MAX_HEADERS_COUNT = MAX_REQUEST_HEADERS + 1;

/**
 * A request head as Node gives it (`rawHeaders`: name, value, name, value ..., names as the client spelt them),
 * read in one pass for every fact the router takes from it before routing, and the header lookup route matching
 * reads (core/routes/request-match.ts). The lookup is indexed by lower-case name the first time a route asks
 * for a header, so a request costs one more pass over its fields however many header matches it meets, and
 * nothing when no route matches on headers. Repeated fields are joined by ", ", as a fetch Headers joins them.
 */
export class RequestHead {
  readonly rawHeaders: readonly string[];
  /** Why the head is refused before routing; undefined when it may go on. */
  readonly problem: RouterError | undefined;
  /** The first Host field's value (`problem` refuses a second); undefined when absent or empty. */
  readonly host: string | undefined;
  /**
   * The one X-Request-Id (core/http/request-id.ts decides whether it is kept); undefined when absent or sent more
   * than once (then which one is meant is unclear, and a new id is better than a guess).
   */
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
      if (length === 4) {
        if (name.toLowerCase() === "host" && ++hosts === 1) host = rawHeaders[i + 1] || undefined;
      } else if (length === 10) {
        if (name.toLowerCase() === "connection") {
          const value = rawHeaders[i + 1] ?? "";
          connection = connection === undefined ? value : `${connection}, ${value}`;
        }
      } else if (length === 12 && name.toLowerCase() === REQUEST_ID_HEADER && ++requestIds === 1) {
        requestId = rawHeaders[i + 1];
      }
    }
    this.problem = headProblem(rawHeaders.length / 2, hosts);
    this.host = host;
    this.requestId = requestIds === 1 ? requestId : undefined;
    this.connection = connection;
  }

  /** The value of the fields named `name` (lower case), joined; null when there is none. */
  get(name: string): string | null {
    this.#byName ??= indexByName(this.rawHeaders);
    return this.#byName.get(name) ?? null;
  }
}

/**
 * Why a request head must be refused before routing. RFC 9112 §3.2: more than one Host field line is a 400
 * (Node's `headers.host` keeps the first and drops the others, so the router and a backend reading the last
 * could disagree on the host).
 */
function headProblem(fields: number, hosts: number): RouterError | undefined {
  if (fields > MAX_REQUEST_HEADERS) return "too_many_headers";
  return hosts > 1 ? "bad_request" : undefined;
}

function indexByName(rawHeaders: readonly string[]): Map<string, string> {
  const byName = new Map<string, string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    const value = rawHeaders[i + 1] ?? "";
    const before = byName.get(name);
    byName.set(name, before === undefined ? value : `${before}, ${value}`);
  }
  return byName;
}
