import { exponentialDelay } from "../../../lib/backoff.js";
/**
 * Passive outlier ejection (the shape of Envoy's consecutive-gateway-failure detector): a backend that
 * fails `consecutiveFailures` times in a row is left out for `baseMs`, doubled on every ejection that
 * follows without a success in between, capped at `maxMs`. A success clears the backend's record.
 *
 * Failures are: connect errors, per-try timeouts, transport errors after sending, and 502/503/504
 * responses (the backend or something in front of it says it cannot serve). Other statuses, 500
 * included, are the application's answer and count as success for ejection.
 *
 * The cap: within one candidate set at most `maxEjectedFraction` of the backends are left out (those
 * ejected longest ago come back first), so a bad network moment cannot empty a service.
 */
export interface EjectionOptions {
  readonly consecutiveFailures: number;
  readonly baseMs: number;
  readonly maxMs: number;
  readonly maxEjectedFraction: number;
  /** Bound on remembered backends so that a flood of distinct failing addresses cannot grow memory. */
  readonly maxTracked: number;
}

export const DEFAULT_EJECTION_OPTIONS: EjectionOptions = {
  consecutiveFailures: 3,
  baseMs: 10_000,
  maxMs: 300_000,
  maxEjectedFraction: 0.5,
  maxTracked: 10_000,
};

interface BackendHealth {
  failures: number;
  ejections: number;
  ejectedAt: number;
  ejectedUntil: number;
}

export interface EjectionEvent {
  readonly address: string;
  readonly durationMs: number;
  readonly ejections: number;
}

export class PassiveEjection {
  readonly #health = new Map<string, BackendHealth>();
  readonly #now: () => number;
  readonly options: EjectionOptions;

  constructor(now: () => number, options: Partial<EjectionOptions> = {}) {
    this.#now = now;
    this.options = { ...DEFAULT_EJECTION_OPTIONS, ...options };
  }

  recordSuccess(address: string): void {
    if (this.#health.size > 0) this.#health.delete(address);
  }

  /** Returns the ejection this failure caused, if any. */
  recordFailure(address: string): EjectionEvent | undefined {
    const now = this.#now();
    let health = this.#health.get(address);
    if (!health) {
      if (this.#health.size >= this.options.maxTracked) this.#forgetOne(now);
      health = { failures: 0, ejections: 0, ejectedAt: 0, ejectedUntil: 0 };
      this.#health.set(address, health);
    }
    // Failures of requests that were already in flight when the backend got ejected do not extend it.
    if (health.ejectedUntil > now) return undefined;
    health.failures++;
    if (health.failures < this.options.consecutiveFailures) return undefined;
    const durationMs = exponentialDelay(health.ejections, {
      initialMs: this.options.baseMs,
      maxMs: this.options.maxMs,
    });
    health.ejections++;
    health.failures = 0;
    health.ejectedAt = now;
    health.ejectedUntil = now + durationMs;
    return { address, durationMs, ejections: health.ejections };
  }

  isEjected(address: string): boolean {
    const health = this.#health.get(address);
    return health !== undefined && health.ejectedUntil > this.#now();
  }

  /**
   * The addresses of `addresses` to leave out now, with the cap applied: at most
   * floor(size × maxEjectedFraction) of them; the most recently ejected stay out.
   */
  excluded(addresses: readonly string[]): ReadonlySet<string> {
    if (this.#health.size === 0) return EMPTY;
    const now = this.#now();
    const ejected: { address: string; at: number }[] = [];
    for (const address of addresses) {
      const health = this.#health.get(address);
      if (health && health.ejectedUntil > now) ejected.push({ address, at: health.ejectedAt });
    }
    if (ejected.length === 0) return EMPTY;
    const allowed = Math.floor(addresses.length * this.options.maxEjectedFraction);
    if (ejected.length > allowed) ejected.sort((a, b) => b.at - a.at);
    return new Set(ejected.slice(0, allowed).map((e) => e.address));
  }

  /** Currently ejected addresses (for metrics and explain). */
  ejectedCount(): number {
    const now = this.#now();
    let count = 0;
    for (const health of this.#health.values()) if (health.ejectedUntil > now) count++;
    return count;
  }

  #forgetOne(now: number): void {
    for (const [address, health] of this.#health) {
      if (health.ejectedUntil <= now) {
        this.#health.delete(address);
        return;
      }
    }
    const first = this.#health.keys().next();
    if (!first.done) this.#health.delete(first.value);
  }
}

const EMPTY: ReadonlySet<string> = new Set();
