import { type ErrorAnswer, errorAnswer, type RouterError } from "./errors.js";
import { REQUEST_ID_HEADER } from "./request-id.js";

/**
 * The router's own answers to a gRPC request. A gRPC client reads a call's outcome from `grpc-status` and
 * `grpc-message`, not from the HTTP status (gRPC PROTOCOL-HTTP2.md: "Responses" and "Trailers-Only"), so an
 * answer it did not come from a gRPC server, such as a 503 with a JSON body, reaches the application as a
 * guessed code at best. The router answers HTTP 200 with the status in the head instead, as Envoy does.
 */

/** gRPC status codes (grpc/doc/statuscodes.md) the router answers with. */
export const GRPC_STATUS = {
  CANCELLED: 1,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** `content-type: application/grpc`, alone or with a suffix (`application/grpc+proto`, `;charset`). */
export function isGrpcRequest(contentType: string | null | undefined): boolean {
  if (!contentType || contentType.length < 16) return false;
  const lower = contentType.slice(0, 16).toLowerCase();
  if (lower !== "application/grpc") return false;
  const next = contentType[16];
  return next === undefined || next === "+" || next === ";";
}

/**
 * gRPC's mapping of an HTTP status to a gRPC code (grpc/doc/http-grpc-status-mapping.md), which Envoy applies
 * to its local replies (Grpc::Utility::httpToGrpcStatus).
 */
export function grpcStatusOfHttp(status: number): number {
  switch (status) {
    case 400:
    case 431:
      return GRPC_STATUS.INTERNAL;
    case 401:
      return GRPC_STATUS.UNAUTHENTICATED;
    case 403:
      return GRPC_STATUS.PERMISSION_DENIED;
    case 404:
      return GRPC_STATUS.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GRPC_STATUS.UNAVAILABLE;
    default:
      return GRPC_STATUS.UNKNOWN;
  }
}

/**
 * The router's errors that mean more than their HTTP status: the attempt deadline passed (Envoy answers its
 * upstream timeout of a gRPC call DEADLINE_EXCEEDED, as the caller's own deadline would), the client went away
 * (CANCELLED; nothing is sent then anyway). Every other error maps by its HTTP status.
 */
const BY_ERROR: Partial<Record<RouterError, number>> = {
  upstream_timeout: GRPC_STATUS.DEADLINE_EXCEEDED,
  client_closed: GRPC_STATUS.CANCELLED,
};

/** The gRPC status code and message of one router error. */
export function grpcStatusOf(error: RouterError): { readonly code: number; readonly message: string } {
  const status = errorAnswer(error).status;
  return { code: BY_ERROR[error] ?? grpcStatusOfHttp(status), message: `edgeslice: ${error}` };
}

/**
 * A router error as a gRPC answer: HTTP 200, `content-type: application/grpc`, `grpc-status` and
 * `grpc-message` in the head and no body (a Trailers-Only response, where the runtime can end the stream with
 * the head: node/grpc-answer.ts), the request id as on every answer. The message is percent-encoded as
 * PROTOCOL-HTTP2.md asks; the router's messages are plain ASCII, so it passes as it is.
 */
export function grpcErrorAnswer(error: RouterError, requestId: string): ErrorAnswer {
  const { code, message } = grpcStatusOf(error);
  return {
    status: 200,
    headers: [
      ["content-type", "application/grpc"],
      ["grpc-status", String(code)],
      ["grpc-message", message],
      [REQUEST_ID_HEADER, requestId],
    ],
    body: "",
  };
}

/** Whether an answer is a gRPC one (grpcErrorAnswer's): runtimes that can write trailers end the stream with it. */
export function isGrpcAnswer(answer: ErrorAnswer): boolean {
  return answer.headers.some(([name]) => name === "grpc-status");
}
