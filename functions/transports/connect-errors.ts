import {
  type AbortCause,
  type AttemptFailure,
  noteAttemptFailure,
  type PolicyDeps,
} from "../core/forwarding/proxy-policy.js";
import type { Backend } from "../core/selection/selection.js";
import { UpstreamConnectError, type UpstreamRequest } from "./upstream.js";

/**
 * Failure classification for every transport (fetch on the web path, the Node router's dispatchers): an attempt failed at connect when nothing reached the backend, so any method may go elsewhere.
 */

/** Error codes of a failed connection: the request was never written. */
const CONNECT_ERROR_CODES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET_NOT_CONNECTED",
]);

/**
 * Nothing reached the backend: an UpstreamConnectError, undici's connect timeout, or any socket error Node
 * raised from `connect` (ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH ...: `syscall` says which phase failed, so an
 * ETIMEDOUT on an established socket is not mistaken for one), found on the error or its causes (Node's
 * fetch rejects with TypeError("fetch failed") whose cause carries the socket error). A reset after the
 * request was written (UND_ERR_SOCKET, ECONNRESET on read/write) is not: the backend may have acted on it.
 */
export function isConnectFailure(error: unknown): boolean {
  for (let depth = 0, current: unknown = error; depth < 4 && current instanceof Error; depth++) {
    if (current instanceof UpstreamConnectError) return true;
    if ((current as { syscall?: unknown }).syscall === "connect") return true;
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && CONNECT_ERROR_CODES.has(code)) return true;
    if (current instanceof AggregateError) return current.errors.some((inner) => isConnectFailure(inner));
    current = current.cause;
  }
  return false;
}

/** What an Upstream rejects with: UpstreamConnectError when nothing reached the backend, else the error. */
export function upstreamError(error: unknown, request: UpstreamRequest): unknown {
  if (!request.signal.aborted && isConnectFailure(error)) {
    return new UpstreamConnectError(request.target, { cause: error });
  }
  return error;
}

/**
 * Records a failed attempt under the shared policy: `cause` when the router cut it itself, else classified
 * by isConnectFailure.
 */
export function failedAttempt(
  backend: Backend,
  cause: AbortCause | undefined,
  error: unknown,
  deps: PolicyDeps,
): AttemptFailure {
  return noteAttemptFailure(backend, cause, cause === undefined && isConnectFailure(error), error, deps);
}
