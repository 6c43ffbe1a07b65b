/**
 * The one backoff formula: capped exponential, `min(maxMs, initialMs * 2^attempt)`. Reconnect delays, retry
 * delays and ejection durations all grow this way; a caller that many replicas share adds full jitter
 * (uniform in [0, delay)), which spreads reconnecting clients apart best of the usual variants (AWS
 * Architecture Blog, "Exponential Backoff And Jitter", 2015; client-go's reflector backs off the same way).
 */
export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
}

/** The delay after `attempt` earlier failures (0 for the first retry): no jitter. */
export function exponentialDelay(attempt: number, policy: BackoffPolicy): number {
  const safeAttempt = Math.max(0, Math.floor(attempt));
  // 2^attempt overflows to Infinity long before it matters; Math.min keeps the cap.
  return Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(safeAttempt, 1024));
}

/** `exponentialDelay` with full jitter. `random` returns [0, 1). */
export function jitteredDelay(attempt: number, policy: BackoffPolicy, random: () => number): number {
  const fraction = Math.min(Math.max(random(), 0), 1);
  return Math.floor(exponentialDelay(attempt, policy) * fraction);
}

/** The stateful wrapper an edge keeps: `next()` after a failure, `reset()` after a success. Jittered. */
export interface Backoff {
  next(): number;
  reset(): void;
  readonly attempts: number;
}

export function createBackoff(policy: BackoffPolicy, random: () => number): Backoff {
  let attempts = 0;
  return {
    next() {
      const delay = jitteredDelay(attempts, policy, random);
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
