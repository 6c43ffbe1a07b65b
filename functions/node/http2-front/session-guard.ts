import type { Http2Session, ServerHttp2Stream } from "node:http2";
import { FrameBudget } from "./frame-budget.js";
import { ENHANCE_YOUR_CALM, type Http2Limits } from "./http2-limits.js";

/** Why a session was ended by its guard: the frame kind whose budget the client spent. */
export type FloodKind = "rapid_reset" | "ping_flood" | "settings_flood";

/**
 * What Node's HTTP/2 does not bound on its own, per client session: streams the client resets before their
 * answer ended (rapid reset, CVE-2023-44487: each opened stream starts a request that costs the router and a
 * backend far more than the two frames cost the client), PING and SETTINGS frames (each needs an ACK). A
 * client over a budget gets GOAWAY ENHANCE_YOUR_CALM (RFC 9113 §5.4.1, §7) and the connection is closed.
 * The session's idle time is bounded too: with no open stream for `idleMs`, it is closed with GOAWAY.
 */
export function guardSession(
  session: Http2Session,
  limits: Http2Limits,
  idleMs: number,
  flooded: (kind: FloodKind) => void,
  now: () => number = performance.now.bind(performance),
): void {
  const window = limits.budgetWindowMs;
  const resets = new FrameBudget(limits.resetsPerWindow, window);
  const pings = new FrameBudget(limits.pingsPerWindow, window);
  const settings = new FrameBudget(limits.settingsPerWindow, window);
  let open = 0;
  const end = (kind: FloodKind) => {
    if (session.destroyed) return;
    flooded(kind);
    session.goaway(ENHANCE_YOUR_CALM);
    session.destroy(undefined, ENHANCE_YOUR_CALM);
  };
  session.on("ping", () => {
    if (!pings.spend(now())) end("ping_flood");
  });
  session.on("remoteSettings", () => {
    if (!settings.spend(now())) end("settings_flood");
  });
  const aborted = () => {
    if (!resets.spend(now())) end("rapid_reset");
  };
  const streamClosed = () => {
    open--;
  };
  session.on("stream", (stream: ServerHttp2Stream) => {
    // Node emits 'stream' after the frames of its read were handled: a stream the client opened and reset
    // in one packet is already closed here, its 'aborted' gone.
    if (stream.destroyed) {
      if (stream.aborted) aborted();
      return;
    }
    open++;
    // 'aborted': the client reset the stream (or the connection went) before the answer was complete. Both
    // come once per stream: `on` spares the wrapper `once` makes.
    stream.on("aborted", aborted);
    stream.on("close", streamClosed);
  });
  if (idleMs > 0) {
    session.setTimeout(idleMs, () => {
      if (open === 0 && !session.closed) session.close();
    });
  }
}
