/** What a server counts per session to bound a client that costs far more than it sends (RFC 9113 §10.5). */
export type FloodKind =
  | "rapid_reset"
  | "ping_flood"
  | "settings_flood"
  | "refused_streams"
  | "stream_errors"
  | "empty_frames";

/**
 * Counts one kind of event a peer causes, in fixed windows: `spend` says whether the peer is still within
 * `perWindow` events of the window it falls in. Pure (time is passed in), so the rule has a table test.
 */
export class FrameBudget {
  #windowStart = Number.NEGATIVE_INFINITY;
  #spent = 0;

  constructor(
    readonly perWindow: number,
    readonly windowMs: number,
  ) {}

  /** Counts one event at `now` (ms); false once the window holds more than `perWindow`. */
  spend(now: number): boolean {
    if (now - this.#windowStart >= this.windowMs) {
      this.#windowStart = now;
      this.#spent = 0;
    }
    return ++this.#spent <= this.perWindow;
  }
}
