import type { Readable } from "node:stream";
import type { ResponseHead } from "./response-head.js";

/**
 * The seam between this HTTP/1.1 client and its user: one request out, its response's head, body and end (or a
 * failure) back, with back-pressure both ways.
 */
export interface OutgoingRequest {
  readonly method: string;
  /** Origin-form target, e.g. `/a/b?c=d`. */
  readonly path: string;
  /** Flat field list (name, value, ...), hop-by-hop fields already removed by the caller. */
  readonly headers: readonly string[];
  /** Read only once a connection is ready for it. */
  readonly body: Readable | null;
  /**
   * The same body again from its first byte, for a request sent once more on a fresh connection (a kept-alive
   * one found closed before any answer); undefined when it can no longer be had whole. Without it, a request
   * with a body is never sent again.
   */
  readonly replayBody?: (() => Readable | undefined) | undefined;
  /**
   * The body's length, sent as Content-Length, and no byte more; undefined: the body is sent chunked. Fields
   * named Content-Length or Transfer-Encoding in `headers` are left out: the framing is this client's to write.
   */
  readonly contentLength: number | undefined;
  /** Transfer codings already applied to the body (e.g. `gzip`), sent before the chunked this client applies. */
  readonly transferCodings: string | undefined;
}

/** What the handler may do to its request while it runs. */
export interface RequestControl {
  /** Ends the request: its connection is closed, and onError follows unless it already ended. */
  abort(error: Error): void;
  /** Reading the response goes on after onData returned false. */
  resume(): void;
}

/** Told what becomes of one request: onStart first, then onHead, onData..., and one of onComplete or onError. */
export interface ExchangeHandler {
  onStart(control: RequestControl): void;
  /** The final response head; field names lower-case, values as Latin-1. Interim (1xx) heads are skipped. */
  onHead(head: ResponseHead): void;
  /** A piece of the body; false pauses reading from the server until `control.resume()`. */
  onData(chunk: Buffer): boolean;
  /**
   * Asked once the chunks of one read from the server were handed on (to this handler, its onComplete perhaps
   * called since): false when nothing references them any more (their writes went to the kernel, or were of
   * copies), so the connection reads into the same buffer again instead of a new one. A handler without it is
   * given each chunk as a copy of its own.
   */
  holdsChunk?(): boolean;
  onComplete(): void;
  /** Connect failures carry `syscall: "connect"`: nothing of the request was sent. */
  onError(error: Error): void;
}

/** Sends requests to one origin server (origin-pool.ts). */
export interface ExchangeDispatcher {
  dispatch(request: OutgoingRequest, handler: ExchangeHandler): void;
}
