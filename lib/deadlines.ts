/**
 * Coarse deadlines for many short waits: the router bounds every upstream attempt, and a Node timer per attempt
 * (a Timeout object, a list insert, and a list created and dropped whenever no other attempt waits) cost more
 * than the rest of the attempt's bookkeeping (bench/proxy). Entries wait in buckets of `tickMs`; one interval
 * timer runs while any bucket is left and expires the buckets whose time came, so a deadline is never early
 * and at most one tick (plus the event loop's own delay) late. Cancelling removes the entry from its bucket;
 * the timer stops once nothing has waited for IDLE_SWEEPS_BEFORE_STOP ticks.
 */

/** Something with a deadline: told once when it passed (unless cancelled first). */
export interface Expiring {
  expire(): void;
}

/** Where an entry waits: handed back to cancel it. */
export type DeadlineSlot = Set<Expiring>;

/** Sweeps with nothing left to expire before the interval timer stops (it restarts with the next entry). */
const IDLE_SWEEPS_BEFORE_STOP = 100;

export class Deadlines {
  readonly #tickMs: number;
  readonly #now: () => number;
  readonly #buckets = new Map<number, DeadlineSlot>();
  #timer: ReturnType<typeof setInterval> | undefined;
  /** The last tick whose bucket was expired. */
  #swept = 0;
  #idleSweeps = 0;
  /** Entries added and neither expired nor cancelled. */
  #waiting = 0;

  constructor(tickMs: number, now: () => number = Date.now) {
    this.#tickMs = tickMs;
    this.#now = now;
  }

  /** `entry.expire()` runs once, no sooner than `delayMs` from now, unless cancelled first. */
  add(entry: Expiring, delayMs: number): DeadlineSlot {
    const now = this.#now();
    if (this.#timer === undefined) this.#start(now);
    const tick = Math.max(Math.ceil((now + Math.max(0, delayMs)) / this.#tickMs), this.#swept + 1);
    let bucket = this.#buckets.get(tick);
    if (bucket === undefined) {
      bucket = new Set();
      this.#buckets.set(tick, bucket);
    }
    if (!bucket.has(entry)) this.#waiting += 1;
    bucket.add(entry);
    return bucket;
  }

  cancel(entry: Expiring, slot: DeadlineSlot | undefined): void {
    if (slot?.delete(entry)) this.#waiting -= 1;
  }

  /** Entries still waiting (cancelled ones are gone at once). */
  get size(): number {
    return this.#waiting;
  }

  #start(now: number): void {
    this.#swept = Math.floor(now / this.#tickMs);
    this.#idleSweeps = 0;
    this.#timer = setInterval(() => this.#sweep(), this.#tickMs);
    this.#timer.unref?.();
  }

  #sweep(): void {
    const current = Math.floor(this.#now() / this.#tickMs);
    while (this.#swept < current) {
      this.#swept += 1;
      const bucket = this.#buckets.get(this.#swept);
      if (bucket === undefined) continue;
      this.#buckets.delete(this.#swept);
      this.#waiting -= bucket.size;
      for (const entry of bucket) entry.expire();
    }
    if (this.#waiting > 0) {
      this.#idleSweeps = 0;
      return;
    }
    this.#idleSweeps += 1;
    if (this.#idleSweeps >= IDLE_SWEEPS_BEFORE_STOP) {
      // Only emptied buckets are left (their entries were cancelled): nothing to wait for.
      this.#buckets.clear();
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}
