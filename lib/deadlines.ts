/**
 * Coarse deadlines for many short waits: the router bounds every upstream attempt, and a Node timer per attempt
 * (a Timeout object, a list insert, and a list created and dropped whenever no other attempt waits) costs more
 * than the rest of the attempt's bookkeeping together. Entries wait in buckets of `tickMs`, each an
 * intrusive list (adding and cancelling hash nothing and allocate nothing); one interval timer runs while any
 * entry waits and expires the buckets whose time came, so a deadline is never early and at most one tick
 * (plus the event loop's own delay) late. The timer stops once nothing has waited for IDLE_SWEEPS_BEFORE_STOP
 * ticks.
 */

/** Sweeps with nothing left to expire before the interval timer stops (it restarts with the next entry). */
const IDLE_SWEEPS_BEFORE_STOP = 100;

/** Something with a deadline: told once when it passed, unless cancelled first. Extend it to be added. */
export abstract class DeadlineEntry {
  previousInBucket: DeadlineEntry | undefined;
  nextInBucket: DeadlineEntry | undefined;
  bucket: Bucket | undefined;

  abstract expire(): void;
}

class Bucket {
  first: DeadlineEntry | undefined;
  last: DeadlineEntry | undefined;
}

export class Deadlines {
  readonly #tickMs: number;
  readonly #now: () => number;
  readonly #buckets = new Map<number, Bucket>();
  #timer: ReturnType<typeof setInterval> | undefined;
  /** The last tick whose bucket was expired. */
  #swept = 0;
  #idleSweeps = 0;
  /** Entries added and neither expired nor cancelled. */
  #waiting = 0;
  /** The bucket the last entry went to: attempts of one timeout arriving together share it. */
  #lastTick = -1;
  #lastBucket: Bucket | undefined;

  /** `now`: a monotonic clock in ms (a wall clock stepped back would hold every deadline until it caught up). */
  constructor(tickMs: number, now: () => number = () => performance.now()) {
    this.#tickMs = tickMs;
    this.#now = now;
  }

  /** `entry.expire()` runs once, no sooner than `delayMs` from now, unless cancelled first. */
  add(entry: DeadlineEntry, delayMs: number): void {
    this.cancel(entry);
    const now = this.#now();
    if (this.#timer === undefined) this.#start(now);
    const tick = Math.max(Math.ceil((now + Math.max(0, delayMs)) / this.#tickMs), this.#swept + 1);
    let bucket = tick === this.#lastTick ? this.#lastBucket : this.#buckets.get(tick);
    if (bucket === undefined) {
      bucket = new Bucket();
      this.#buckets.set(tick, bucket);
    }
    this.#lastTick = tick;
    this.#lastBucket = bucket;
    entry.bucket = bucket;
    entry.previousInBucket = bucket.last;
    entry.nextInBucket = undefined;
    if (bucket.last) bucket.last.nextInBucket = entry;
    else bucket.first = entry;
    bucket.last = entry;
    this.#waiting += 1;
  }

  cancel(entry: DeadlineEntry): void {
    const bucket = entry.bucket;
    if (bucket === undefined) return;
    const { previousInBucket: previous, nextInBucket: next } = entry;
    if (previous) previous.nextInBucket = next;
    else bucket.first = next;
    if (next) next.previousInBucket = previous;
    else bucket.last = previous;
    entry.bucket = undefined;
    entry.previousInBucket = undefined;
    entry.nextInBucket = undefined;
    this.#waiting -= 1;
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
      if (bucket === this.#lastBucket) this.#lastBucket = undefined;
      for (let entry = bucket.first; entry !== undefined; entry = bucket.first) {
        this.cancel(entry);
        entry.expire();
      }
    }
    if (this.#waiting > 0) {
      this.#idleSweeps = 0;
      return;
    }
    this.#idleSweeps += 1;
    if (this.#idleSweeps >= IDLE_SWEEPS_BEFORE_STOP) {
      // Only emptied buckets are left (their entries were cancelled): nothing to wait for.
      this.#buckets.clear();
      this.#lastBucket = undefined;
      this.#lastTick = -1;
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}
