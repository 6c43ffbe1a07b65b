import { exponentialDelay } from "../../../lib/backoff.js";

/**
 * Whether a whole cluster is fit for traffic, from the outcomes of the attempts steered to it (connect errors,
 * timeouts, resets and 5xx answers are failures). A circuit breaker per cluster: closed (`healthy`), open
 * (`stepped-over`: other clusters come first, it serves only when none is left), then half-open
 * (`recovering`: a small share of requests probes it until `recoverAfter` attempts in a row succeed).
 *
 * It opens on either signal, whichever comes first: `consecutiveFailures` failed attempts in a row (a cluster
 * that went away: fast however much success came before), or a failure ratio of at least `failureRatio` over
 * the last `windowMs` with `minAttempts` attempts or more (a cluster that fails part of the time). Each opening
 * lasts `baseMs`, doubled for each reopening without a recovery in between, capped at `maxMs` (as pod ejection
 * backs off). Pure: every call takes the time.
 */
export interface ClusterHealthOptions {
  readonly consecutiveFailures: number;
  readonly failureRatio: number;
  readonly minAttempts: number;
  readonly windowMs: number;
  /** The window is kept in this many buckets of windowMs / buckets: it forgets a bucket at a time. */
  readonly buckets: number;
  readonly baseMs: number;
  readonly maxMs: number;
  readonly recoverAfter: number;
}

export const DEFAULT_CLUSTER_HEALTH: ClusterHealthOptions = {
  consecutiveFailures: 5,
  failureRatio: 0.5,
  minAttempts: 10,
  windowMs: 5_000,
  buckets: 5,
  baseMs: 2_000,
  maxMs: 60_000,
  recoverAfter: 3,
};

export type HealthState = "healthy" | "stepped-over" | "recovering";

/** What explain shows of one cluster's health. */
export interface HealthView {
  readonly state: HealthState;
  readonly attempts: number;
  readonly failures: number;
  /** Failed attempts in a row, up to now. */
  readonly consecutiveFailures: number;
  /** ms until a stepped-over cluster is probed again; 0 otherwise. */
  readonly steppedOverForMs: number;
  /** Openings without a recovery in between (the back-off's exponent). */
  readonly trips: number;
}

export class ClusterHealth {
  readonly #options: ClusterHealthOptions;
  readonly #attempts: number[];
  readonly #failures: number[];
  /** Start of the newest bucket; the window is the buckets up to it. */
  #bucketStart = Number.NEGATIVE_INFINITY;
  #newest = 0;
  #consecutive = 0;
  #trips = 0;
  #openUntil = 0;
  #open = false;
  #probeSuccesses = 0;

  constructor(options: ClusterHealthOptions = DEFAULT_CLUSTER_HEALTH) {
    this.#options = options;
    this.#attempts = new Array<number>(options.buckets).fill(0);
    this.#failures = new Array<number>(options.buckets).fill(0);
  }

  state(now: number): HealthState {
    if (!this.#open) return "healthy";
    return now < this.#openUntil ? "stepped-over" : "recovering";
  }

  /** One attempt's outcome; true when this outcome stepped the cluster over. */
  record(now: number, failed: boolean): boolean {
    const state = this.state(now);
    // Outcomes of attempts sent before it was stepped over say nothing new.
    if (state === "stepped-over") return false;
    if (state === "recovering") {
      if (failed) return this.#stepOver(now);
      this.#probeSuccesses++;
      if (this.#probeSuccesses >= this.#options.recoverAfter) this.#recover();
      return false;
    }
    this.#roll(now);
    const slot = this.#newest;
    this.#attempts[slot] = (this.#attempts[slot] ?? 0) + 1;
    if (!failed) {
      this.#consecutive = 0;
      return false;
    }
    this.#failures[slot] = (this.#failures[slot] ?? 0) + 1;
    this.#consecutive++;
    const { attempts, failures } = this.#totals();
    const options = this.#options;
    if (
      this.#consecutive >= options.consecutiveFailures ||
      (attempts >= options.minAttempts && failures >= attempts * options.failureRatio)
    ) {
      return this.#stepOver(now);
    }
    return false;
  }

  view(now: number): HealthView {
    const state = this.state(now);
    if (state === "healthy") this.#roll(now);
    const { attempts, failures } = this.#totals();
    return {
      state,
      attempts,
      failures,
      consecutiveFailures: this.#consecutive,
      steppedOverForMs: state === "stepped-over" ? this.#openUntil - now : 0,
      trips: this.#trips,
    };
  }

  #stepOver(now: number): boolean {
    const { baseMs, maxMs } = this.#options;
    this.#open = true;
    this.#openUntil = now + exponentialDelay(this.#trips, { initialMs: baseMs, maxMs });
    this.#trips++;
    this.#probeSuccesses = 0;
    this.#clearWindow();
    return true;
  }

  #recover(): void {
    this.#open = false;
    this.#trips = 0;
    this.#probeSuccesses = 0;
    this.#clearWindow();
  }

  #clearWindow(): void {
    this.#attempts.fill(0);
    this.#failures.fill(0);
    this.#consecutive = 0;
    this.#bucketStart = Number.NEGATIVE_INFINITY;
  }

  /** Moves the newest bucket to the one `now` falls in, emptying the buckets it passes. */
  #roll(now: number): void {
    const { buckets, windowMs } = this.#options;
    const width = windowMs / buckets;
    if (now < this.#bucketStart + width) return;
    const steps =
      this.#bucketStart === Number.NEGATIVE_INFINITY
        ? buckets
        : Math.floor((now - this.#bucketStart) / width);
    for (let i = 0; i < Math.min(steps, buckets); i++) {
      this.#newest = (this.#newest + 1) % buckets;
      this.#attempts[this.#newest] = 0;
      this.#failures[this.#newest] = 0;
    }
    this.#bucketStart =
      this.#bucketStart === Number.NEGATIVE_INFINITY ? now : this.#bucketStart + steps * width;
  }

  #totals(): { attempts: number; failures: number } {
    let attempts = 0;
    let failures = 0;
    for (let i = 0; i < this.#options.buckets; i++) {
      attempts += this.#attempts[i] ?? 0;
      failures += this.#failures[i] ?? 0;
    }
    return { attempts, failures };
  }
}
