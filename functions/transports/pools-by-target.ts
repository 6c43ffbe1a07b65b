import { originOf, type UpstreamTarget } from "./upstream.js";

/** How a transport makes, watches and closes the pool of one backend. */
export interface PoolLifecycle<P> {
  create(target: UpstreamTarget): P;
  /** Requests under way or waiting: a busy pool is never closed for idleness. */
  busy(pool: P): boolean;
  close(pool: P): void;
}

interface Entry<P> {
  readonly pool: P;
  /** Used since the last sweep: a flag per request rather than a clock read (the sweep dates it). */
  used: boolean;
  lastUsedAt: number;
  /** Swept: a target that still maps here looks its pool up again. */
  retired: boolean;
}

/**
 * The keep-alive pools of a transport, one per backend origin, closed once unused for `idleMs` (backends come
 * and go with pods). Backends are the same objects for as long as a snapshot serves them (core/selection/selector.ts
 * memoises them), so a request finds its pool without building the origin string and hashing it.
 */
export class PoolsByTarget<P> {
  readonly #lifecycle: PoolLifecycle<P>;
  readonly #entries = new Map<string, Entry<P>>();
  readonly #byTarget = new WeakMap<UpstreamTarget, Entry<P>>();
  readonly #sweep: ReturnType<typeof setInterval>;

  constructor(lifecycle: PoolLifecycle<P>, idleMs: number) {
    this.#lifecycle = lifecycle;
    this.#sweep = setInterval(() => this.#closeIdle(idleMs), Math.max(1_000, Math.min(idleMs, 30_000)));
    this.#sweep.unref();
  }

  poolFor(target: UpstreamTarget): P {
    let entry = this.#byTarget.get(target);
    if (entry === undefined || entry.retired) {
      const origin = originOf(target);
      entry = this.#entries.get(origin);
      if (entry === undefined) {
        entry = { pool: this.#lifecycle.create(target), used: true, lastUsedAt: Date.now(), retired: false };
        this.#entries.set(origin, entry);
      }
      this.#byTarget.set(target, entry);
    }
    entry.used = true;
    return entry.pool;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Stops the sweep and hands over every pool, forgotten: the caller closes or destroys them. */
  takeAll(): P[] {
    clearInterval(this.#sweep);
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    for (const entry of entries) entry.retired = true;
    return entries.map((entry) => entry.pool);
  }

  #closeIdle(idleMs: number): void {
    const now = Date.now();
    for (const [origin, entry] of this.#entries) {
      if (entry.used) {
        entry.used = false;
        entry.lastUsedAt = now;
        continue;
      }
      if (entry.lastUsedAt > now - idleMs || this.#lifecycle.busy(entry.pool)) continue;
      entry.retired = true;
      this.#entries.delete(origin);
      this.#lifecycle.close(entry.pool);
    }
  }
}
