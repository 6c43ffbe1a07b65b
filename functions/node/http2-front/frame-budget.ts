/**
 * Counts one kind of frame a client sends, in fixed windows: `spend` says whether the client is still within
 * `perWindow` events of the window it falls in. Pure (time is passed in), so the rule has a table test.
 */
export class FrameBudget {
  readonly #perWindow: number;
  readonly #windowMs: number;
  #windowStart = Number.NEGATIVE_INFINITY;
  #spent = 0;

  constructor(perWindow: number, windowMs: number) {
    this.#perWindow = perWindow;
    this.#windowMs = windowMs;
  }

  /** Counts one event at `now` (ms); false once the window holds more than `perWindow`. */
  spend(now: number): boolean {
    if (now - this.#windowStart >= this.#windowMs) {
      this.#windowStart = now;
      this.#spent = 0;
    }
    this.#spent++;
    return this.#spent <= this.#perWindow;
  }
}
