import type { RouterError } from "./errors.js";

/**
 * Whether the router takes a request's method: only one of `known`, the methods an HTTP/1.1 request line may
 * carry to the runtime's parser (Node: llhttp's list, `http.METHODS`), compared case-sensitively as RFC 9110
 * §9.1 says method tokens are. An HTTP/1.1 client sending `get` or an unknown method is refused 400 by the
 * parser; an HTTP/2 client's `:method` reaches the router unchecked, so the fronts hold it to the same list:
 * a backend never receives over HTTP/2 a method it would never receive over HTTP/1.1.
 */
export function methodProblem(method: string, known: ReadonlySet<string>): RouterError | undefined {
  return known.has(method) ? undefined : "bad_request";
}
