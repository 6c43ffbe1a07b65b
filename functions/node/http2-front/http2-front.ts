import {
  constants,
  createServer,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
  type ServerOptions,
} from "node:http2";
import type { Duplex } from "node:stream";
import type { Logger } from "../../../lib/logger.js";
import type { RequestHandler } from "../request-handler.js";
import { MAX_REQUEST_HEADERS } from "../request-head.js";
import { type FloodKind, guardSession } from "./session-guard.js";

export interface Http2FrontOptions {
  /** The router's request handler's entry for each stream (request-handler.ts), on node:http2's stream API. */
  readonly onStream: RequestHandler["http2"];
  /** How long close() lets open streams finish after GOAWAY before it cuts the sessions. */
  readonly drainMs: number;
  /** A session with no open stream for this long is closed with GOAWAY; 0 keeps it. */
  readonly idleTimeoutMs: number;
  readonly logger?: Logger;
}

/** HTTP/2 for client connections another listener accepted: h2c prior knowledge on PORT, ALPN h2 on HTTPS_PORT. */
export type Http2Front = ReturnType<typeof createHttp2Front>;

/** How often a flood of one kind is logged at most: an attacker must not fill the log. */
const FLOOD_LOG_INTERVAL_MS = 60_000;

/** Node's defaults leave concurrent streams unbounded and allow 1,000 invalid frames: these are tighter. */
const SERVER_OPTIONS: ServerOptions = {
  // Invalid frames, and streams refused at creation (over the concurrency limit), before Node ends the session.
  maxSessionInvalidFrames: 100,
  maxSessionRejectedStreams: 100,
  // Node's accounting of the session's buffered frames and header blocks, MiB.
  maxSessionMemory: 10,
  // Node counts pseudo-header fields too; the header list size bounds a request well before this does.
  maxHeaderListPairs: MAX_REQUEST_HEADERS,
  // Entries in one SETTINGS frame; RFC 9113 defines six.
  maxSettings: 32,
  // Our own PINGs awaiting an answer (we send none; a bound all the same).
  maxOutstandingPings: 10,
  peerMaxConcurrentStreams: 100,
  settings: {
    // SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §6.5.2): a stream past it is refused.
    maxConcurrentStreams: 100,
    // SETTINGS_MAX_HEADER_LIST_SIZE: decoded header bytes per request, each field counted as name + value + 32.
    maxHeaderListSize: 32 * 1024,
    enablePush: false,
  },
};

function ignoreStreamError(): void {}

/**
 * An http2 server that never listens: the listeners hand it their connections, and its streams go to the same
 * request handler as HTTP/1.1 requests.
 */
export function createHttp2Front(options: Http2FrontOptions) {
  const server = createServer(SERVER_OPTIONS);
  server.on(
    "stream",
    (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, raw: string[]) => {
      // A stream's failure (the client's RST_STREAM, its session's protocol error) is read from 'close' by the
      // request handler; without an 'error' listener for the stream's whole life Node throws it, and one
      // misbehaving client would end the process.
      stream.on("error", ignoreStreamError);
      // A client that waits for 100 (Continue) before its body gets it at once: the body streams to the backend
      // as the attempt takes it (RFC 9110 §10.1.1; Expect itself is not forwarded).
      if (headers.expect === "100-continue" && !stream.destroyed)
        stream.additionalHeaders({ ":status": 100 });
      options.onStream(stream, headers, flags, raw);
    },
  );
  const sessions = new Set<Http2Session>();
  const loggedAt = new Map<FloodKind, number>();
  const flooded = (kind: FloodKind) => {
    const at = Date.now();
    if ((loggedAt.get(kind) ?? Number.NEGATIVE_INFINITY) + FLOOD_LOG_INTERVAL_MS > at) return;
    loggedAt.set(kind, at);
    options.logger?.warn("http2 client over a frame budget: session ended with ENHANCE_YOUR_CALM", { kind });
  };
  let closing: Promise<void> | undefined;
  let drained: (() => void) | undefined;
  server.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.once("close", () => {
      sessions.delete(session);
      if (sessions.size === 0) drained?.();
    });
    guardSession(session, options.idleTimeoutMs, flooded);
  });
  // A session's error ends it (Node destroys it); the client is gone, nothing to answer or log per event.
  server.on("sessionError", () => undefined);
  return {
    /** Serves HTTP/2 on a connected socket (net.Socket, or tls.TLSSocket that negotiated h2). */
    accept(socket: Duplex): void {
      if (closing) {
        socket.destroy();
        return;
      }
      // A client's FIN ends its session. http.Server's sockets allow half-open connections, and an HTTP/2
      // session reads its socket's handle itself: it would never hear the end, and the streams of a client
      // that closed its connection without RST_STREAM would stay open with their backends' (issue 34).
      socket.allowHalfOpen = false;
      server.emit("connection", socket);
    },
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        // Resolved at the bound whether or not the cut sessions' sockets have closed by then.
        const bound = setTimeout(() => {
          // A non-zero code, so a client sees its cut streams fail rather than end as if complete.
          for (const session of sessions) session.destroy(undefined, constants.NGHTTP2_CANCEL);
          resolve();
        }, options.drainMs);
        drained = () => {
          clearTimeout(bound);
          resolve();
        };
        for (const session of sessions) session.close();
        if (sessions.size === 0) drained();
      });
      return closing;
    },
  };
}
