import { constants, type ServerOptions } from "node:http2";
import { MAX_REQUEST_HEADERS } from "../request-head.js";

/**
 * The bounds of one client HTTP/2 session. Node's defaults leave concurrent streams unbounded and allow 1,000
 * invalid frames; these are tighter, and the frame budgets below cover what Node counts nowhere.
 */
export interface Http2Limits {
  /** SETTINGS_MAX_CONCURRENT_STREAMS we announce (RFC 9113 §6.5.2); a stream past it is refused. */
  readonly maxConcurrentStreams: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE: decoded header bytes per request, each field counted as name + value + 32. */
  readonly maxHeaderListSize: number;
  /** Frames Node finds invalid before it ends the session. */
  readonly maxSessionInvalidFrames: number;
  /** Streams refused at creation (over the concurrency limit) before Node ends the session. */
  readonly maxSessionRejectedStreams: number;
  /** Node's accounting of the session's buffered frames and header blocks, MiB. */
  readonly maxSessionMemoryMiB: number;
  /** The window the frame budgets count in. */
  readonly budgetWindowMs: number;
  /** Streams the client resets before their response ended, per window (rapid reset, CVE-2023-44487). */
  readonly resetsPerWindow: number;
  /** PING frames from the client per window. */
  readonly pingsPerWindow: number;
  /** SETTINGS frames from the client per window. */
  readonly settingsPerWindow: number;
}

export const DEFAULT_HTTP2_LIMITS: Http2Limits = {
  maxConcurrentStreams: 100,
  maxHeaderListSize: 32 * 1024,
  maxSessionInvalidFrames: 100,
  maxSessionRejectedStreams: 100,
  maxSessionMemoryMiB: 10,
  budgetWindowMs: 10_000,
  resetsPerWindow: 200,
  pingsPerWindow: 100,
  settingsPerWindow: 50,
};

/** Node's http2 server options for `limits`. */
export function http2ServerOptions(limits: Http2Limits): ServerOptions {
  return {
    maxSessionInvalidFrames: limits.maxSessionInvalidFrames,
    maxSessionRejectedStreams: limits.maxSessionRejectedStreams,
    maxSessionMemory: limits.maxSessionMemoryMiB,
    // Node counts pseudo-header fields too; the header list size bounds a request well before this does.
    maxHeaderListPairs: MAX_REQUEST_HEADERS,
    // Entries in one SETTINGS frame; RFC 9113 defines six.
    maxSettings: 32,
    // Our own PINGs awaiting an answer (we send none; a bound all the same).
    maxOutstandingPings: 10,
    peerMaxConcurrentStreams: limits.maxConcurrentStreams,
    settings: {
      maxConcurrentStreams: limits.maxConcurrentStreams,
      maxHeaderListSize: limits.maxHeaderListSize,
      enablePush: false,
    },
  };
}

/** GOAWAY code for a client that exceeds a budget (RFC 9113 §7). */
export const ENHANCE_YOUR_CALM = constants.NGHTTP2_ENHANCE_YOUR_CALM;
