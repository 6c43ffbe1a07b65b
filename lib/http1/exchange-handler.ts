import type { Readable } from "node:stream";

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
  /** Read only once a connection is ready for it; framed by the list's Content-Length, else chunked. */
  readonly body: Readable | null;
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
  onHead(status: number, reason: string, fields: string[]): void;
  /** A piece of the body; false pauses reading from the server until `control.resume()`. */
  onData(chunk: Buffer): boolean;
  onComplete(): void;
  /** Connect failures carry `syscall: "connect"` (transports/connect-errors.ts tells them apart). */
  onError(error: Error): void;
}

/** Sends requests to one origin server (origin-pool.ts). */
export interface ExchangeDispatcher {
  dispatch(request: OutgoingRequest, handler: ExchangeHandler): void;
}
