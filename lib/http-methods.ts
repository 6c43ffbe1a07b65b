/**
 * The request methods of RFC 9110 §9 in its order, then PATCH (RFC 5789). Exactly the Gateway API's
 * HTTPMethod enum, so a route record's method, a CORS filter's allowed methods and the metrics' method label
 * all take their values from this one list. Method names are case-sensitive (RFC 9110 §9.1): `get` is none.
 */
export const HTTP_METHODS = [
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "CONNECT",
  "OPTIONS",
  "TRACE",
  "PATCH",
] as const;

export type HttpMethod = (typeof HTTP_METHODS)[number];
