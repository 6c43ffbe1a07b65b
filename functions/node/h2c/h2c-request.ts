import {
  type ClientHttp2Stream,
  constants,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from "node:http2";
import type {
  BodySink,
  BodySource,
  ExchangeHandler,
  ExchangeHead,
  OutgoingRequest,
  RequestControl,
} from "../../../lib/http-exchange.js";
import { isGrpcRequest } from "../../core/http/grpc-errors.js";
import { UpstreamConnectError } from "../../transports/upstream.js";
import { addFields, flatFields } from "../http2-front/h2-fields.js";
import type { H2cOrigin, H2cSession, SessionWaiter } from "./h2c-session.js";

/** What the pseudo-header fields carry (Host is `:authority`, RFC 9113 §8.3.1), and the framing HTTP/2 has not. */
const CARRIED_OTHERWISE: ReadonlySet<string> = new Set(["host", "content-length"]);

/** One request as HTTP/2 request headers: pseudo-header fields first, then the rest, repeated names as lists. */
export function h2RequestHeaders(request: OutgoingRequest): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {
    ":method": request.method,
    ":scheme": "http",
    ":path": request.path,
  };
  const list = request.headers;
  for (let i = 0; i + 1 < list.length; i += 2) {
    if ((list[i] as string).toLowerCase() === "host") {
      headers[":authority"] = list[i + 1] as string;
      break;
    }
  }
  addFields(headers, list, CARRIED_OTHERWISE);
  if (request.contentLength !== undefined) headers["content-length"] = String(request.contentLength);
  // gRPC's request headers: "TE: trailers" is required (PROTOCOL-HTTP2.md) and some servers refuse a call
  // without it; as a hop-by-hop field the client's own never gets this far.
  if (isGrpcRequest(headers["content-type"] as string | undefined)) headers.te = "trailers";
  return headers;
}

/** Methods whose requests node:http2 ends with their HEADERS unless told otherwise (its isPayloadMeaningless). */
const ENDED_BY_DEFAULT: ReadonlySet<string> = new Set(["GET", "HEAD", "DELETE"]);

/**
 * Opens the request's stream, its HEADERS ending it when there is no body. Options go only where node:http2's
 * default ending is wrong: its copy of an options object that has properties grows out of line as it fills
 * in the priority defaults, an allocation per request that the common case (a bodiless GET, a gRPC POST) skips.
 */
function openStream(
  session: H2cSession,
  headers: OutgoingHttpHeaders,
  endStream: boolean,
): ClientHttp2Stream {
  const method = headers[":method"] as string;
  if (endStream === ENDED_BY_DEFAULT.has(method)) return session.session.request(headers);
  return session.session.request(headers, { endStream });
}

/** The response head as every client hands it on; HTTP/2 has no reason phrase and no transfer codings. */
function responseHead(headers: IncomingHttpHeaders, endStream: boolean): ExchangeHead {
  return {
    status: Number(headers[":status"]),
    reason: "",
    fields: flatFields(headers),
    transferCodings: undefined,
    endStream,
    trailing: !endStream,
  };
}

const REQUEST = Symbol("edgeslice.h2cRequest");
type Carrier = ClientHttp2Stream & { [REQUEST]?: H2cRequest };

function onResponse(this: Carrier, headers: IncomingHttpHeaders, flags: number): void {
  this[REQUEST]?.onResponse(headers, flags);
}
function onData(this: Carrier, chunk: Buffer): void {
  this[REQUEST]?.onData(this, chunk);
}
function onTrailers(this: Carrier, trailers: IncomingHttpHeaders): void {
  this[REQUEST]?.onTrailers(trailers);
}
function onEnd(this: Carrier): void {
  this[REQUEST]?.complete();
}
function onClose(this: Carrier): void {
  this[REQUEST]?.onClose(this);
}
function onDrain(this: Carrier): void {
  this[REQUEST]?.bodyDrained();
}
function ignoreError(): void {}

/**
 * One request on an h2c backend, told to its handler as the HTTP/1.1 client tells its own (lib/http-exchange.ts:
 * onStart, onHead, onData..., onTrailers, onComplete or onError), so one exchange drives both. The body streams as the stream takes it (HTTP/2 flow control);
 * reading the response pauses while the handler's client is full.
 *
 * A failure is "nothing reached the backend" (UpstreamConnectError, so any method may be retried) when the
 * session never connected, the peer refused the stream (REFUSED_STREAM, RFC 9113 §8.7), or its GOAWAY named a
 * last stream below this one (§6.8: "not processed"); any other reset may have been acted on.
 */
export class H2cRequest implements RequestControl, SessionWaiter, BodySink {
  readonly #origin: H2cOrigin;
  readonly #request: OutgoingRequest;
  readonly #handler: ExchangeHandler;
  #body: BodySource | null;
  #stream: ClientHttp2Stream | undefined;
  #session: H2cSession | undefined;
  #aborted: Error | undefined;
  #answered = false;
  #done = false;
  /** Sent again once already, on a new session: a GOAWAY said the first stream was not processed. */
  #resent = false;

  constructor(origin: H2cOrigin, request: OutgoingRequest, handler: ExchangeHandler) {
    this.#origin = origin;
    this.#request = request;
    this.#body = request.body;
    this.#handler = handler;
  }

  start(): void {
    this.#handler.onStart(this);
    if (this.#aborted) this.#fail(this.#aborted);
    else this.#origin.acquire(this);
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

  /** The session the stream goes on is ready (h2c-session.ts H2cOrigin), or failed to connect. */
  sessionReady(session: H2cSession, error: Error | undefined): void {
    this.#session = session;
    let stream: ClientHttp2Stream | Error;
    try {
      stream =
        this.#refusal(error) ?? openStream(session, h2RequestHeaders(this.#request), this.#body === null);
    } catch (thrown) {
      stream = new UpstreamConnectError(this.#origin.target, { cause: thrown });
    }
    if (stream instanceof Error) {
      session.closed();
      this.#fail(stream);
      return;
    }
    this.#stream = stream;
    (stream as Carrier)[REQUEST] = this;
    stream.on("response", onResponse);
    stream.on("data", onData);
    stream.on("trailers", onTrailers);
    stream.on("end", onEnd);
    // Each of these comes once per stream: `on` spares the wrapper `once` makes. Errors are read from 'close'
    // (rstCode, GOAWAY); a listener keeps them from being thrown.
    stream.on("error", ignoreError);
    stream.on("close", onClose);
    this.#body?.start(this);
  }

  /** Why no stream opens on a session that came ready (or failed to connect). */
  #refusal(error: Error | undefined): Error | undefined {
    if (error !== undefined || this.#aborted)
      return this.#aborted ?? new UpstreamConnectError(this.#origin.target, { cause: error });
    // HTTP/2 has no transfer codings (RFC 9113 §8.2.2): such a body cannot be sent as it came.
    if (this.#request.transferCodings !== undefined)
      return new Error("a transfer-coded request body cannot be sent over HTTP/2");
    return undefined;
  }

  /** The body's chunks go to the stream as the stream takes them (HTTP/2 flow control, 'drain'). */
  bodyData(chunk: Buffer): boolean {
    const stream = this.#stream;
    if (stream === undefined || stream.write(chunk)) return true;
    stream.once("drain", onDrain);
    return false;
  }

  bodyEnd(): void {
    this.#stream?.end();
  }

  bodyFailed(): void {
    this.#stream?.close(constants.NGHTTP2_CANCEL);
  }

  /** The stream took what it held: the body flows again. */
  bodyDrained(): void {
    this.#body?.resume();
  }

  /** The stream's events (one shared listener each, no closure per request). */
  onResponse(headers: IncomingHttpHeaders, flags: number): void {
    if (this.#done || this.#aborted) return;
    this.#answered = true;
    this.#handler.onHead(responseHead(headers, (flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0));
  }

  onData(stream: ClientHttp2Stream, chunk: Buffer): void {
    if (!this.#handler.onData(chunk)) stream.pause();
  }

  onTrailers(trailers: IncomingHttpHeaders): void {
    this.#handler.onTrailers?.(flatFields(trailers));
  }

  complete(): void {
    if (this.#done || !this.#answered || this.#aborted) return;
    this.#done = true;
    this.#handler.onComplete();
  }

  onClose(stream: ClientHttp2Stream): void {
    this.#session?.closed();
    this.#body?.stop();
    if (this.#done) return;
    const code = stream.rstCode ?? constants.NGHTTP2_NO_ERROR;
    if (this.#answered && !this.#aborted && code === constants.NGHTTP2_NO_ERROR && stream.readableEnded) {
      this.complete();
      return;
    }
    const error = this.#aborted ?? this.#streamError(stream, code);
    // The session is going away (GOAWAY) and never processed this stream: the backend is fine, so the request
    // goes once more on a new session of the same backend, as the HTTP/1.1 client sends one again when a
    // kept-alive connection closed under it; with its body only when that can be had again whole.
    if (error instanceof UpstreamConnectError && !this.#resent && this.#session?.retired === true) {
      const body = this.#body === null ? null : this.#request.body?.replay?.();
      if (body !== undefined) {
        this.#resent = true;
        this.#stream = undefined;
        this.#body = body;
        this.#origin.acquire(this);
        return;
      }
    }
    this.#fail(error);
  }

  #streamError(stream: ClientHttp2Stream, code: number): Error {
    const { target } = this.#origin;
    const error = new Error(`h2c stream to ${target.ip}:${target.port} reset (code ${code})`);
    const lastProcessed = this.#session?.goawayLastStreamId;
    const unprocessed =
      !this.#answered &&
      (code === constants.NGHTTP2_REFUSED_STREAM ||
        stream.id === undefined ||
        (lastProcessed !== undefined && stream.id > lastProcessed));
    return unprocessed ? new UpstreamConnectError(target, { cause: error }) : error;
  }

  #fail(error: Error): void {
    if (this.#done) return;
    this.#done = true;
    this.#handler.onError(error);
  }
}
