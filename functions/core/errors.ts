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
  return { status: STATUS[error], headers, body: `{"error":"${error}"}` };
}

export function errorResponse(error: RouterError): Response {
  const answer = errorAnswer(error);
  return new Response(answer.body, {
    status: answer.status,
    headers: answer.headers.map(([n, v]) => [n, v]),
  });
}
