import type { Readable } from "node:stream";

/**
 * The seam between the Node proxy (node/proxy.ts, node/upstream-attempt.ts) and the client that carries its
 * requests to backends (client.ts): one request out, its response's head, body and end (or a failure) back,
 * with back-pressure both ways.
 */
export interface OutboundRequest {
  readonly method: string;
  /** Origin-form target, e.g. `/a/b?c=d`. */
  readonly path: string;
  /** Flat field list (name, value, ...), hop-by-hop fields already removed (core/headers.ts). */
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
  /** A piece of the body; false pauses reading from the backend until `control.resume()`. */
  onData(chunk: Buffer): boolean;
  onComplete(): void;
  /** Connect failures carry `syscall: "connect"` (transports/connect-errors.ts tells them apart). */
  onError(error: Error): void;
}

/** Sends requests to one backend. */
export interface ExchangeDispatcher {
  dispatch(request: OutboundRequest, handler: ExchangeHandler): void;
}
