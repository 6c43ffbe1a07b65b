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
  return new ApiReachability(options.logger, options.now ?? Date.now);
}

/** The reachability tracker (see createReachability): since when nothing got through, and who to tell after. */
export class ApiReachability implements Reachability {
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #listeners = new Set<(outageStartedAt: number) => void>();
  #since: number | undefined;

  constructor(logger: Logger, now: () => number) {
    this.#logger = logger;
    this.#now = now;
  }

  get unreachableSince(): number | undefined {
    return this.#since;
  }

  reached(): void {
    if (this.#since === undefined) return;
    const outageStartedAt = this.#since;
    this.#since = undefined;
    this.#logger.info("the API server answers again", { unreachableForMs: this.#now() - outageStartedAt });
    for (const listener of [...this.#listeners]) {
      try {
        listener(outageStartedAt);
      } catch (error) {
        this.#logger.error("a reachability listener threw", { error });
      }
    }
  }

  failed(error: unknown): void {
    if (this.#since !== undefined) return;
    this.#since = this.#now();
    this.#logger.warn("the API server cannot be reached; serving the last known state meanwhile", { error });
  }

  onRecovered(listener: (outageStartedAt: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
