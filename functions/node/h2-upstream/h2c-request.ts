import {
  type ClientHttp2Stream,
  constants,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from "node:http2";
import type {
  ExchangeHandler,
  OutgoingRequest,
  RequestControl,
} from "../../../lib/http1/exchange-handler.js";
import type { ResponseHead } from "../../../lib/http1/response-head.js";
import { isGrpcRequest } from "../../core/grpc-errors.js";
import { UpstreamConnectError, type UpstreamTarget } from "../../transports/upstream.js";
import type { H2cOrigin } from "./h2c-origin.js";
import type { H2cSession } from "./h2c-session.js";

/** A response head from an HTTP/2 backend: framing is HTTP/2's (RFC 9113 §8.1), so none of HTTP/1.1's applies. */
export interface H2cResponseHead extends ResponseHead {
  /** The HEADERS frame ended the stream: a Trailers-Only answer (gRPC), relayed as one to HTTP/2 clients. */
  readonly endStream: boolean;
}

/** What an HTTP/2 client's exchange wants besides the HTTP/1.1 handler's events: the response's trailers. */
export interface H2cExchangeHandler extends ExchangeHandler {
  onTrailers?(trailers: IncomingHttpHeaders): void;
}

/**
 * Fields HTTP/2 forbids (RFC 9113 §8.2.2: connection-specific ones; `te` only as "trailers") and those the
 * pseudo-header fields carry (Host is `:authority`, §8.3.1).
 */
const NOT_SENT = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "http2-settings",
  "te",
  "host",
  "content-length",
]);

/** One request as HTTP/2 request headers: pseudo-header fields first, then the rest, repeated names as lists. */
export function h2RequestHeaders(request: OutgoingRequest): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {
    ":method": request.method,
    ":scheme": "http",
    ":path": request.path,
  };
  const list = request.headers;
  for (let i = 0; i + 1 < list.length; i += 2) {
    const name = (list[i] as string).toLowerCase();
    const value = list[i + 1] as string;
    if (name === "host") {
      headers[":authority"] ??= value;
      continue;
    }
    if (NOT_SENT.has(name) || name.startsWith(":")) continue;
    const present = headers[name];
    if (present === undefined) headers[name] = value;
    else if (Array.isArray(present)) present.push(value);
    else headers[name] = [String(present), value];
  }
  if (request.contentLength !== undefined) headers["content-length"] = String(request.contentLength);
  // gRPC's request headers: "TE: trailers" is required (PROTOCOL-HTTP2.md) and some servers refuse a call
  // without it; as a hop-by-hop field the client's own never gets this far.
  if (isGrpcRequest(headers["content-type"] as string | undefined)) headers.te = "trailers";
  return headers;
}

/** The response head as the HTTP/1.1 client's handlers read it: lower-case names, values in order. */
function responseHead(headers: IncomingHttpHeaders, endStream: boolean): H2cResponseHead {
  const fields: string[] = [];
  for (const name of Object.keys(headers)) {
    if (name.startsWith(":")) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) fields.push(name, item);
    else fields.push(name, value);
  }
  const length = headers["content-length"];
  return {
    status: Number(headers[":status"]),
    reason: "",
    fields,
    contentLength: typeof length === "string" && /^\d{1,15}$/.test(length) ? Number(length) : undefined,
    chunked: false,
    transferCodings: undefined,
    persistent: true,
    keepAliveHintMs: undefined,
    endStream,
  };
}

/**
 * One request on an h2c backend, told to its handler as the HTTP/1.1 client tells its own (onStart, onHead,
 * onData..., onComplete or onError), so the Node proxy's attempts (backend-attempt.ts) and the HTTP/2 client
 * path (h2-exchange.ts) drive both alike. The body streams as the stream takes it (HTTP/2 flow control);
 * reading the response pauses while the handler's client is full.
 *
 * A failure is "nothing reached the backend" (UpstreamConnectError, so any method may be retried) when the
 * session never connected, the peer refused the stream (REFUSED_STREAM, RFC 9113 §8.7), or its GOAWAY named a
 * last stream below this one (§6.8: "not processed"); any other reset may have been acted on.
 */
export class H2cRequest implements RequestControl {
  readonly #handler: H2cExchangeHandler;
  readonly #request: OutgoingRequest;
  readonly #target: UpstreamTarget;
  #stream: ClientHttp2Stream | undefined;
  #session: H2cSession | undefined;
  #aborted: Error | undefined;
  #answered = false;
  #done = false;
  #origin: H2cOrigin | undefined;
  /** Sent again once already, on a new session: a GOAWAY said the first stream was not processed. */
  #resent = false;

  constructor(target: UpstreamTarget, request: OutgoingRequest, handler: H2cExchangeHandler) {
    this.#target = target;
    this.#request = request;
    this.#handler = handler;
  }

  start(origin: H2cOrigin): void {
    this.#handler.onStart(this);
    if (this.#aborted) {
      this.#fail(this.#aborted);
      return;
    }
    this.#origin = origin;
    origin.acquire((session, error) => this.#open(session, error));
  }

  abort(error: Error): void {
    if (this.#done || this.#aborted) return;
    this.#aborted = error;
    const stream = this.#stream;
    if (stream) stream.close(constants.NGHTTP2_CANCEL);
    // Before a session was ready the stream never opened: the failure is told when the session answers.
  }

  resume(): void {
    this.#stream?.resume();
  }

  #open(session: H2cSession, error: Error | undefined): void {
    this.#session = session;
    if (error !== undefined || this.#aborted) {
      session.closed();
      this.#fail(this.#aborted ?? new UpstreamConnectError(this.#target, { cause: error }));
      return;
    }
    const request = this.#request;
    if (request.transferCodings !== undefined) {
      // HTTP/2 has no transfer codings (RFC 9113 §8.2.2): such a body cannot be sent as it came.
      session.closed();
      this.#fail(new Error("a transfer-coded request body cannot be sent over HTTP/2"));
      return;
    }
    let stream: ClientHttp2Stream;
    try {
      stream = session.session.request(h2RequestHeaders(request), { endStream: request.body === null });
    } catch (thrown) {
      session.closed();
      this.#fail(new UpstreamConnectError(this.#target, { cause: thrown }));
      return;
    }
    this.#stream = stream;
    stream.once("response", (headers, flags) => this.#onResponse(headers, flags));
    stream.on("data", (chunk: Buffer) => {
      if (!this.#handler.onData(chunk)) stream.pause();
    });
    stream.once("trailers", (trailers) => this.#handler.onTrailers?.(trailers));
    stream.once("end", () => this.#complete());
    // Errors are read from 'close' (rstCode, GOAWAY); a listener keeps them from being thrown.
    stream.on("error", () => undefined);
    stream.once("close", () => this.#onClose(stream));
    const body = request.body;
    if (body) {
      body.once("error", () => stream.close(constants.NGHTTP2_CANCEL));
      body.pipe(stream);
    }
  }

  #onResponse(headers: IncomingHttpHeaders, flags: number): void {
    if (this.#done || this.#aborted) return;
    this.#answered = true;
    this.#handler.onHead(responseHead(headers, (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0));
  }

  #complete(): void {
    if (this.#done || !this.#answered || this.#aborted) return;
    this.#done = true;
    this.#handler.onComplete();
  }

  #onClose(stream: ClientHttp2Stream): void {
    this.#session?.closed();
    this.#request.body?.unpipe(stream);
    if (this.#done) return;
    const code = stream.rstCode ?? constants.NGHTTP2_NO_ERROR;
    if (this.#answered && !this.#aborted && code === constants.NGHTTP2_NO_ERROR && stream.readableEnded) {
      this.#complete();
      return;
    }
    const error = this.#aborted ?? this.#streamError(stream, code);
    // The session is going away (GOAWAY) and never processed this stream: the backend is fine, so a request
    // without a body goes once more on a new session of the same backend, as the HTTP/1.1 client sends a GET
    // again when a kept-alive connection closed under it. A body already read cannot be sent again.
    const origin = this.#origin;
    if (
      origin &&
      error instanceof UpstreamConnectError &&
      !this.#resent &&
      this.#request.body === null &&
      this.#session?.retired === true
    ) {
      this.#resent = true;
      this.#stream = undefined;
      origin.acquire((session, acquired) => this.#open(session, acquired));
      return;
    }
    this.#fail(error);
  }

  #streamError(stream: ClientHttp2Stream, code: number): Error {
    const error = new Error(`h2c stream to ${this.#target.ip}:${this.#target.port} reset (code ${code})`);
    const lastProcessed = this.#session?.goawayLastStreamId;
    const unprocessed =
      !this.#answered &&
      (code === constants.NGHTTP2_REFUSED_STREAM ||
        stream.id === undefined ||
        (lastProcessed !== undefined && stream.id > lastProcessed));
    return unprocessed ? new UpstreamConnectError(this.#target, { cause: error }) : error;
  }

  #fail(error: Error): void {
    if (this.#done) return;
    this.#done = true;
    this.#handler.onError(error);
  }
}
