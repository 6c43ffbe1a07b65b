/**
 * The contract's error bodies (docs/design.md, "Error answers"), and the router's own:
 * - no_snapshot: no store snapshot was ever loaded (the router listens before its first load succeeds);
 * - request_timeout: the client stopped sending its request body (the backend is not blamed);
 * - too_many_headers: more header fields than the router reads (Node keeps only so many, so a later
 *   Content-Length or Host would be lost);
 * - client_closed: the client went away before the response head; nothing is sent (nginx logs 499);
 * - invalid_backend: the rule's weighted choice fell on a backendRef the sync could not resolve (a Service
 *   not allowed or not found), or the rule has no backend with a weight (Gateway API HTTPRouteRule.backendRefs:
 *   "requests that would have otherwise been routed to an invalid backend MUST receive a 500");
 * - misdirected_request: on TLS, a host the listener or the certificate the connection's SNI chose does not
 *   serve (RFC 9110 §15.5.20; core/tls/misdirected.ts);
 * - backend_tls_unsupported: the chosen Service port asks for TLS (a BackendTLSPolicy) and this router opens
 *   none to backends (Workers); such a request is never sent in cleartext.
 */
export type RouterError =
  | "no_route"
  | "no_endpoints"
  | "no_snapshot"
  | "bad_gateway"
  | "upstream_timeout"
  | "bad_request"
  | "request_timeout"
  | "too_many_headers"
  | "client_closed"
  | "invalid_backend"
  | "misdirected_request"
  | "backend_tls_unsupported";

const STATUS: Record<RouterError, number> = {
  no_route: 404,
  no_endpoints: 503,
  no_snapshot: 503,
  bad_gateway: 502,
  upstream_timeout: 504,
  bad_request: 400,
  request_timeout: 408,
  too_many_headers: 431,
  client_closed: 499,
  invalid_backend: 500,
  misdirected_request: 421,
  backend_tls_unsupported: 502,
};

/** Seconds a client should wait before retrying a route that has no endpoints (RFC 9110 §10.2.3). */
export const NO_ENDPOINTS_RETRY_AFTER_SECONDS = 5;

/** Seconds before retrying while no snapshot is loaded: the first load usually lands within one. */
export const NO_SNAPSHOT_RETRY_AFTER_SECONDS = 1;

/** One error answer in parts, for transports that write HTTP themselves (the Node upgrade path). */
export interface ErrorAnswer {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
}

export function errorAnswer(error: RouterError): ErrorAnswer {
  const headers: [string, string][] = [
    ["content-type", "application/json"],
    ["cache-control", "no-store"],
  ];
  if (error === "no_endpoints") headers.push(["retry-after", String(NO_ENDPOINTS_RETRY_AFTER_SECONDS)]);
  if (error === "no_snapshot") headers.push(["retry-after", String(NO_SNAPSHOT_RETRY_AFTER_SECONDS)]);
  // RFC 9110 §15.5.9: a server that gives up on a request says it closes the connection. The unread rest
  // of a body could otherwise be read as the next request (RFC 9112 §9.3; the same after 431).
  if (error === "request_timeout" || error === "too_many_headers") headers.push(["connection", "close"]);
  return { status: STATUS[error], headers, body: `{"error":"${error}"}` };
}

export function errorResponse(error: RouterError): Response {
  const answer = errorAnswer(error);
  return new Response(answer.body, {
    status: answer.status,
    headers: answer.headers.map(([n, v]) => [n, v]),
  });
}
