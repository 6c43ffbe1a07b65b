import { type AbortCause, type AttemptFailure, abortedBeforeAttempt } from "../core/proxy-policy.js";

/**
 * How the Node transports (proxy.ts, handshake.ts) bound their attempts without AbortControllers: a check
 * before each attempt, and one timer per attempt for whichever limit ends first, the attempt's own or what is
 * left of the request's total.
 */
export interface CuttableAttempt {
  /** The router ends this attempt: a timeout, or the client went away. */
  cut(cause: AbortCause): void;
}

/** The failure to report when the next attempt may not start (the client left, or no time is left). */
export function refusedAttempt(clientGone: boolean, remainingMs: number): AttemptFailure | undefined {
  if (clientGone) return abortedBeforeAttempt("client-gone");
  if (remainingMs <= 0) return abortedBeforeAttempt("total-timeout");
  return undefined;
}

/** Cuts `attempt` once `tryTimeoutMs` or `remainingMs` passed, whichever is shorter, naming that limit. */
export function armAttemptTimer(
  attempt: CuttableAttempt,
  remainingMs: number,
  tryTimeoutMs: number,
): NodeJS.Timeout {
  return remainingMs <= tryTimeoutMs
    ? setTimeout(cut, remainingMs, attempt, "total-timeout")
    : setTimeout(cut, tryTimeoutMs, attempt, "try-timeout");
}

function cut(attempt: CuttableAttempt, cause: AbortCause): void {
  attempt.cut(cause);
}
