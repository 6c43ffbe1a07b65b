import type { Socket } from "node:net";

/**
 * The seam between an HTTP client and its user, whatever the protocol on the wire (the HTTP/1.1 client in
 * http1/, the h2c one of the Node router): one request out; its response's head, body, trailers and end (or a
 * failure) back, with back-pressure both ways. Every upstream dispatcher speaks it, so one exchange drives them
 * all.
 */
export interface OutgoingRequest {
  readonly method: string;
  /** Origin-form target, e.g. `/a/b?c=d`. */
  readonly path: string;
  /** Flat field list (name, value, ...), hop-by-hop fields already removed by the caller. */
  readonly headers: readonly string[];
  /** Read only once a connection is ready for it. */
  readonly body: BodySource | null;
  /**
   * The body's length, sent as Content-Length, and no byte more; undefined: the body is sent chunked. Fields
   * named Content-Length or Transfer-Encoding in `headers` are left out: the framing is the client's to write.
   */
  readonly contentLength: number | undefined;
  /** Transfer codings already applied to the body (e.g. `gzip`), sent before the chunked HTTP/1.1 applies. */
  readonly transferCodings: string | undefined;
  /** An HTTP/1.1 protocol upgrade (RFC 9110 §7.8): a 101 hands the connection over (`onUpgrade`). */
  readonly upgrade?: boolean;
}

/**
 * A request body as a client sends it: read only while the connection takes more, so back-pressure reaches
 * the body's own source (the client's socket or stream) without a stream in between.
 */
export interface BodySource {
  /** Sends the body to `sink` from its first byte: bodyData calls, then bodyEnd or bodyFailed. */
  start(sink: BodySink): void;
  /** The sink took what it held (after bodyData returned false): chunks come again. */
  resume(): void;
  /** The request ended first: nothing more reaches the sink. */
  stop(): void;
  /**
   * The same body again from its first byte, for a request sent once more on a fresh connection (a kept-alive
   * one found closed before any answer); undefined when it can no longer be had whole. A source without it is
   * never sent twice.
   */
  replay?(): BodySource | undefined;
}

/** Where a body's bytes go: a connection's socket (HTTP/1.1) or a stream (h2c). */
export interface BodySink {
  /** A chunk of the body; false: the sink is full, and nothing more comes until the source's resume(). */
  bodyData(chunk: Buffer): boolean;
  bodyEnd(): void;
  /** The body's own source failed (its client went away mid-body). */
  bodyFailed(error: Error): void;
}

/** A final response head as every client hands it on. */
export interface ExchangeHead {
  readonly status: number;
  /** The reason phrase; "" when there is none (HTTP/2 has none). */
  readonly reason: string;
  /** Name (lower-case), value, name, value ... in the server's order; values as Latin-1. */
  readonly fields: string[];
  /** Transfer codings still applied to the body as handed on (HTTP/1.1 only; chunked removed), e.g. `gzip`. */
  readonly transferCodings: string | undefined;
  /** The head ended the response: no body and no trailers follow (HTTP/2's Trailers-Only answer). */
  readonly endStream?: boolean;
  /** Trailer fields may follow the body (onTrailers): HTTP/2 relays them. */
  readonly trailing?: boolean;
}

/** What the handler may do to its request while it runs. */
export interface RequestControl {
  /** Ends the request: its stream or connection is closed, and onError follows unless it already ended. */
  abort(error: Error): void;
  /** Reading the response goes on after onData returned false. */
  resume(): void;
}

/** Told what becomes of one request: onStart first, then onHead, onData..., and one of onComplete or onError. */
export interface ExchangeHandler {
  onStart(control: RequestControl): void;
  /** The final response head. Interim (1xx) heads are skipped, but for a 101 to an upgrade (onUpgrade). */
  onHead(head: ExchangeHead): void;
  /** A piece of the body; false pauses reading from the server until `control.resume()`. */
  onData(chunk: Buffer): boolean;
  /**
   * Asked once the chunks of one read from the server were handed on (to this handler, its onComplete perhaps
   * called since): false when nothing references them any more (their writes went to the kernel, or were of
   * copies), so the connection reads into the same buffer again instead of a new one. A handler without it is
   * given each chunk as a copy of its own.
   */
  holdsChunk?(): boolean;
  /** The response's trailer fields (name, value, ...), before onComplete; only protocols that relay them. */
  onTrailers?(fields: string[]): void;
  /**
   * The server switched protocols (101) for an upgrade request: the connection is the handler's now, with the
   * bytes that came after the head. onComplete and onError never follow.
   */
  onUpgrade?(head: ExchangeHead, socket: Socket, rest: Buffer): void;
  onComplete(): void;
  /** Connect failures carry `syscall: "connect"`: nothing of the request was sent. */
  onError(error: Error): void;
}

/** Sends requests to one origin server (http1/origin-pool.ts). */
export interface ExchangeDispatcher {
  dispatch(request: OutgoingRequest, handler: ExchangeHandler): void;
}
