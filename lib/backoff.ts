/**
 * Capped exponential backoff with "full jitter": the delay is uniform in [0, min(maxMs, initialMs * 2^attempt)).
 * Full jitter spreads reconnecting replicas apart best of the usual variants (AWS Architecture Blog,
 * "Exponential Backoff And Jitter", 2015); client-go's reflector backs off the same way, capped.
 */
export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
}

/** `attempt` counts consecutive failures before this one (0 for the first retry). `random` returns [0, 1). */
export function nextDelay(attempt: number, policy: BackoffPolicy, random: () => number): number {
  const safeAttempt = Math.max(0, Math.floor(attempt));
  // 2^attempt overflows to Infinity long before it matters; Math.min keeps the cap.
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(safeAttempt, 1024));
  const fraction = Math.min(Math.max(random(), 0), 1);
  return Math.floor(ceiling * fraction);
}

/** The stateful wrapper an edge keeps: `next()` after a failure, `reset()` after a success. */
export interface Backoff {
  next(): number;
  reset(): void;
  readonly attempts: number;
}

export function createBackoff(policy: BackoffPolicy, random: () => number): Backoff {
  let attempts = 0;
  return {
    next() {
      const delay = nextDelay(attempts, policy, random);
      attempts += 1;
      return delay;
    },
    reset() {
      attempts = 0;
    },
    get attempts() {
      return attempts;
    },
  };
}
