import type { Logger } from "../../lib/logger.js";

/**
 * Whether the sync can reach its API server, as every request of the informers and the elector reports it:
 * unreachable from the first request after an answer that got none usable (refused or reset connection,
 * timeout, 5xx, 429) until the next answer. A 401/403 is an answer: refusals are tracked by the informers
 * (retry-policy.ts) and the election, not here. The leader keeps publishing its last known state meanwhile
 * (fail static) and says since when in its heartbeat, /readyz and /metrics.
 *
 * @example
 * const reachability = createReachability({ logger, now: Date.now });
 * reachability.onRecovered((outageStartedAt) => informer.wake(outageStartedAt));
 * reachability.failed(error); reachability.reached();
 */
export interface Reachability {
  /** A request got a usable answer. */
  reached(): void;
  /** A request got no usable answer; `error` is logged once per outage. */
  failed(error: unknown): void;
  /** Since when (epoch ms) nothing got through; undefined while reachable. */
  readonly unreachableSince: number | undefined;
  /** Called with the outage's start at the first success after it; returns the unsubscribe function. */
  onRecovered(listener: (outageStartedAt: number) => void): () => void;
}

export function createReachability(options: { logger: Logger; now?: () => number }): Reachability {
  const { logger } = options;
  const now = options.now ?? Date.now;
  const listeners = new Set<(outageStartedAt: number) => void>();
  let since: number | undefined;
  return {
    reached() {
      if (since === undefined) return;
      const outageStartedAt = since;
      since = undefined;
      logger.info("the API server answers again", { unreachableForMs: now() - outageStartedAt });
      for (const listener of [...listeners]) {
        try {
          listener(outageStartedAt);
        } catch (error) {
          logger.error("a reachability listener threw", { error });
        }
      }
    },
    failed(error) {
      if (since !== undefined) return;
      since = now();
      logger.warn("the API server cannot be reached; serving the last known state meanwhile", { error });
    },
    get unreachableSince() {
      return since;
    },
    onRecovered(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
