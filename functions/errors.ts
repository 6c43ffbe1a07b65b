/** The contract's error bodies (DESIGN.md "User contract" → status codes). */
export type RouterError = "no_route" | "no_endpoints" | "bad_gateway" | "upstream_timeout" | "bad_request";

const STATUS: Record<RouterError, number> = {
  no_route: 404,
  no_endpoints: 503,
  bad_gateway: 502,
  upstream_timeout: 504,
  bad_request: 400,
};

/** Seconds a client should wait before retrying a route that has no endpoints (RFC 9110 §10.2.3). */
export const NO_ENDPOINTS_RETRY_AFTER_SECONDS = 5;

export function errorResponse(error: RouterError): Response {
  const headers = new Headers({ "content-type": "application/json", "cache-control": "no-store" });
  if (error === "no_endpoints") headers.set("retry-after", String(NO_ENDPOINTS_RETRY_AFTER_SECONDS));
  return new Response(`{"error":"${error}"}`, { status: STATUS[error], headers });
}

export function statusOf(error: RouterError): number {
  return STATUS[error];
}
