import { constants, type Http2Session, type ServerHttp2Stream } from "node:http2";

/** GOAWAY code for a client that exceeds a budget (RFC 9113 §7). */
const ENHANCE_YOUR_CALM = constants.NGHTTP2_ENHANCE_YOUR_CALM;
/** The window the frame budgets count in. */
const BUDGET_WINDOW_MS = 10_000;

/** Why a session was ended by its guard: the frame kind whose budget the client spent. */
export type FloodKind = "rapid_reset" | "ping_flood" | "settings_flood";

/**
 * Counts one kind of frame a client sends, in fixed windows: `spend` says whether the client is still within
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

/**
 * What Node's HTTP/2 does not bound on its own, per client session: streams the client resets before their
 * answer ended (rapid reset, CVE-2023-44487: each opened stream starts a request that costs the router and a
 * backend far more than the two frames cost the client), PING and SETTINGS frames (each needs an ACK). A
 * client over a budget gets GOAWAY ENHANCE_YOUR_CALM (RFC 9113 §5.4.1, §7) and the connection is closed.
 * The session's idle time is bounded too: with no open stream for `idleMs`, it is closed with GOAWAY.
 */
export function guardSession(session: Http2Session, idleMs: number, flooded: (kind: FloodKind) => void) {
  const resets = new FrameBudget(200, BUDGET_WINDOW_MS);
  const pings = new FrameBudget(100, BUDGET_WINDOW_MS);
  const settings = new FrameBudget(50, BUDGET_WINDOW_MS);
  let open = 0;
  const spend = (budget: FrameBudget, kind: FloodKind) => {
    if (budget.spend(performance.now()) || session.destroyed) return;
    flooded(kind);
    session.goaway(ENHANCE_YOUR_CALM);
    session.destroy(undefined, ENHANCE_YOUR_CALM);
  };
  session.on("ping", () => spend(pings, "ping_flood"));
  session.on("remoteSettings", () => spend(settings, "settings_flood"));
  // `aborted`: the client reset the stream (or the connection went) before the answer was complete. Node
  // sets it before the stream's 'close', so one listener per stream (shared by the session's streams) reads both.
  function streamClosed(this: ServerHttp2Stream): void {
    open--;
    if (this.aborted) spend(resets, "rapid_reset");
  }
  session.on("stream", (stream: ServerHttp2Stream) => {
    // Node emits 'stream' after the frames of its read were handled: a stream the client opened and reset
    // in one packet is already closed here, its 'close' gone.
    if (stream.destroyed) {
      if (stream.aborted) spend(resets, "rapid_reset");
      return;
    }
    open++;
    stream.on("close", streamClosed);
  });
  if (idleMs > 0) {
    session.setTimeout(idleMs, () => {
      if (open === 0 && !session.closed) session.close();
    });
  }
}
