import type { Socket } from "node:net";
import { ErrorCode } from "../../../lib/http2/frames.js";
import {
  type FloodKind,
  Http2ServerSession,
  type ServerSessionOptions,
  type ServerStream,
} from "../../../lib/http2/server-session.js";
import type { Logger } from "../../../lib/logger.js";
import type { Http2StreamHooks } from "../listener-counts.js";

export interface Http2FrontOptions {
  /** The request handler's entry for each stream (request-handler.ts), and the streams' gauge. */
  readonly streams: Http2StreamHooks;
  /** How long close() lets open streams finish after GOAWAY before it cuts the sessions. */
  readonly drainMs: number;
  /** A session with no open stream for this long is closed with GOAWAY; 0 keeps it. */
  readonly idleTimeoutMs: number;
  readonly logger?: Logger;
}

/** HTTP/2 for client connections another listener accepted: h2c prior knowledge on PORT, ALPN h2 on HTTPS_PORT. */
export type Http2Front = ReturnType<typeof createHttp2Front>;

/** How often a flood of one kind, or an internal error, is logged at most: an attacker must not fill the log. */
const FLOOD_LOG_INTERVAL_MS = 60_000;

/** Whether a line about `key` may be logged now: once per FLOOD_LOG_INTERVAL_MS at most. */
function logThrottle(): (key: string) => boolean {
  const loggedAt = new Map<string, number>();
  return (key) => {
    const at = Date.now();
    if ((loggedAt.get(key) ?? Number.NEGATIVE_INFINITY) + FLOOD_LOG_INTERVAL_MS > at) return false;
    loggedAt.set(key, at);
    return true;
  };
}

/** A client's limits (RFC 9113 §6.5.2), as its SETTINGS tell it. */
const SESSION_LIMITS = {
  maxConcurrentStreams: 100,
  // Decoded header bytes per request, each field counted as name + value + 32.
  maxHeaderListSize: 32 * 1024,
  // What one request body may hold while no attempt reads it; 100 such streams bound a session's memory.
  initialStreamWindow: 65_535,
  connectionWindow: 1024 * 1024,
} as const;

/** RFC 9110 §10.1.1: a client that waits for 100 (Continue) before its body. */
function expectsContinue(stream: ServerStream): boolean {
  const fields = stream.fields;
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] === "expect") return (fields[i + 1] as string).toLowerCase() === "100-continue";
  }
  return false;
}

const CONTINUE = [":status", "100"];

/**
 * The router's HTTP/2 server (lib/http2/server-session.ts) over the connections the listeners hand it; its
 * streams go to the same request handler as HTTP/1.1 requests.
 */
export function createHttp2Front(options: Http2FrontOptions) {
  const sessions = new Set<Http2ServerSession>();
  const due = logThrottle();
  const sessionOptions: ServerSessionOptions = { ...SESSION_LIMITS, idleTimeoutMs: options.idleTimeoutMs };
  const { onStream, onStreamClosed } = options.streams;
  let closing: Promise<void> | undefined;
  let drained: (() => void) | undefined;
  const onFlood = (kind: FloodKind) => {
    if (!due(kind)) return;
    options.logger?.warn("http2 client over a frame budget: session ended with ENHANCE_YOUR_CALM", { kind });
  };
  const onFailure = (error: unknown) => {
    if (due("internal_error"))
      options.logger?.error("http2 session ended by an internal error", { error: String(error) });
  };
  return {
    /** Serves HTTP/2 on a connected socket (net.Socket, or tls.TLSSocket that negotiated h2). */
    accept(socket: Socket): void {
      if (closing) {
        socket.destroy();
        return;
      }
      const session: Http2ServerSession = new Http2ServerSession(
        socket,
        {
          onRequest(stream) {
            // The body streams to the backend as the attempt takes it (Expect itself is not forwarded).
            if (!stream.endedWithHead && expectsContinue(stream)) stream.inform(CONTINUE);
            onStream(stream, socket);
          },
          onRequestClosed: () => onStreamClosed(socket),
          onFlood,
          onFailure,
          onClose() {
            sessions.delete(session);
            if (sessions.size === 0) drained?.();
          },
        },
        sessionOptions,
      );
      sessions.add(session);
    },
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        // Resolved at the bound whether or not the cut sessions' sockets have closed by then.
        const bound = setTimeout(() => {
          // A non-zero code, so a client sees its cut streams fail rather than end as if complete.
          for (const session of [...sessions]) session.cut(ErrorCode.CANCEL);
          resolve();
        }, options.drainMs);
        drained = () => {
          clearTimeout(bound);
          resolve();
        };
        for (const session of [...sessions]) session.close();
        if (sessions.size === 0) drained();
      });
      return closing;
    },
  };
}
