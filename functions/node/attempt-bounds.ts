import { DeadlineEntry, Deadlines } from "../../lib/deadlines.js";
import {
  type AbortCause,
  type AttemptFailure,
  abortedBeforeAttempt,
} from "../core/forwarding/proxy-policy.js";

/**
 * How the Node router (exchange.ts, tls/passthrough.ts) bounds their attempts without AbortControllers: a check
 * before each attempt, and one deadline per attempt for whichever limit ends first, the attempt's own or what
 * is left of the request's total.
 */
export interface CuttableAttempt {
  /** The router ends this attempt: a timeout, or the client went away. */
  cut(cause: AbortCause): void;
}

/**
 * Attempt deadlines fire at most this much late (lib/deadlines.ts): timeouts are configured in hundreds of
 * milliseconds or more, and a Node timer per attempt cost more than the attempt's other bookkeeping.
 */
const ATTEMPT_DEADLINE_TICK_MS = 10;

const deadlines = new Deadlines(ATTEMPT_DEADLINE_TICK_MS);

/** The failure to report when the next attempt may not start (the client left, or no time is left). */
export function refusedAttempt(clientGone: boolean, remainingMs: number): AttemptFailure | undefined {
  if (clientGone) return abortedBeforeAttempt("client-gone");
  if (remainingMs <= 0) return abortedBeforeAttempt("total-timeout");
  return undefined;
}

/** One attempt's bound: cuts the attempt, naming the limit, unless cancelled first. */
export class AttemptTimer extends DeadlineEntry {
  readonly #attempt: CuttableAttempt;
  readonly #cause: AbortCause;

  constructor(attempt: CuttableAttempt, cause: AbortCause, delayMs: number) {
    super();
    this.#attempt = attempt;
    this.#cause = cause;
    deadlines.add(this, delayMs);
  }

  expire(): void {
    this.#attempt.cut(this.#cause);
  }

  cancel(): void {
    deadlines.cancel(this);
  }
}

/** Cuts `attempt` once `tryTimeoutMs` or `remainingMs` passed, whichever is shorter, naming that limit. */
export function armAttemptTimer(
  attempt: CuttableAttempt,
  remainingMs: number,
  tryTimeoutMs: number,
): AttemptTimer {
  return remainingMs <= tryTimeoutMs
    ? new AttemptTimer(attempt, "total-timeout", remainingMs)
    : new AttemptTimer(attempt, "try-timeout", tryTimeoutMs);
}
