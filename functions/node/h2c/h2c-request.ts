import type {
  BodySink,
  BodySource,
  ExchangeHandler,
  OutgoingRequest,
  RequestControl,
} from "../../../lib/http-exchange.js";
import { type ClientStream, ErrorCode, type StreamListener } from "../../../lib/http2/client-session.js";
import { endpointAddress } from "../../../store/records.js";
import { isGrpcRequest } from "../../core/http/grpc-errors.js";
import { HOP_BY_HOP } from "../../core/http/hop-by-hop.js";
import { UpstreamConnectError, type UpstreamTarget } from "../../transports/upstream.js";
import type { H2cOrigin, H2cSession, SessionWaiter } from "./h2c-session.js";

/** Carried by the pseudo-header fields (Host is `:authority`, RFC 9113 §8.3.1), or framing HTTP/2 has not. */
const CARRIED_OTHERWISE: ReadonlySet<string> = new Set(["host", "content-length"]);

/**
 * One request as an HTTP/2 field list: the pseudo-header fields first (§8.3), then the rest with lowercase
 * names (§8.2.1) and no connection-specific field (§8.2.2), whatever put one in the list.
 */
export function h2RequestFields(request: OutgoingRequest, target: UpstreamTarget): string[] {
  const list = request.headers;
  const fields = [":method", request.method, ":scheme", "http", ":authority", "", ":path", request.path];
  let authority: string | undefined;
  let grpc = false;
  for (let i = 0; i + 1 < list.length; i += 2) {
    const name = (list[i] as string).toLowerCase();
    const value = list[i + 1] as string;
    if (name === "host") authority ??= value;
    if (HOP_BY_HOP.has(name) || CARRIED_OTHERWISE.has(name) || name.charCodeAt(0) === 0x3a) continue;
    if (name === "content-type") grpc = isGrpcRequest(value);
    fields.push(name, value);
  }
  fields[5] = authority ?? endpointAddress(target);
  if (request.contentLength !== undefined) fields.push("content-length", String(request.contentLength));
  // gRPC's request headers: "TE: trailers" is required (PROTOCOL-HTTP2.md) and some servers refuse a call
  // without it; as a hop-by-hop field the client's own never gets this far.
  if (grpc) fields.push("te", "trailers");
  return fields;
}

/**
 * One request on an h2c backend, told to its handler as the HTTP/1.1 client tells its own (lib/http-exchange.ts:
 * onStart, onHead, onData..., onTrailers, onComplete or onError), so one exchange drives both. The body goes as
 * the stream's flow control lets it; reading the response pauses while the handler's client is full.
 *
 * A failure is "nothing reached the backend" (UpstreamConnectError, so any method may be retried) when the
 * session never connected, or the stream was certainly not processed: REFUSED_STREAM (RFC 9113 §8.7), above a
 * GOAWAY's last stream id (§6.8), or never sent; any other reset may have been acted on.
 */
export class H2cRequest implements RequestControl, SessionWaiter, BodySink, StreamListener {
  readonly #origin: H2cOrigin;
  readonly #request: OutgoingRequest;
  readonly #handler: ExchangeHandler;
  #body: BodySource | null;
  #stream: ClientStream | undefined;
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
    // Before a session was ready the stream never opened: the failure is told when the session answers.
    this.#stream?.reset(ErrorCode.CANCEL);
  }

  resume(): void {
    this.#stream?.resume();
  }

  /** The session the stream goes on is ready (h2c-session.ts H2cOrigin), or failed to connect. */
  sessionReady(session: H2cSession, error: Error | undefined): void {
    this.#session = session;
    const target = this.#origin.target;
    const refused = this.#refusal(error);
    if (refused === undefined) {
      try {
        const fields = h2RequestFields(this.#request, target);
        this.#stream = session.session.request(fields, this.#body === null, this);
        this.#body?.start(this);
        return;
      } catch (thrown) {
        this.#fail(new UpstreamConnectError(target, { cause: thrown }));
      }
    } else this.#fail(refused);
    session.closed();
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

  bodyData(chunk: Buffer): boolean {
    return this.#stream === undefined || this.#stream.write(chunk);
  }

  bodyEnd(): void {
    this.#stream?.end();
  }

  bodyFailed(): void {
    this.#stream?.reset(ErrorCode.CANCEL);
  }

  /** The stream's window opened: the body flows again. */
  onDrain(): void {
    this.#body?.resume();
  }

  onHead(status: number, fields: string[], endStream: boolean): void {
    if (this.#done || this.#aborted) return;
    this.#answered = true;
    this.#handler.onHead({
      status,
      reason: "",
      fields,
      transferCodings: undefined,
      endStream,
      trailing: !endStream,
    });
  }

  onData(chunk: Buffer): void {
    if (!this.#done && !this.#handler.onData(chunk)) this.#stream?.pause();
  }

  onTrailers(fields: string[]): void {
    if (!this.#done) this.#handler.onTrailers?.(fields);
  }

  onClose(code: number, unprocessed: boolean, error: Error | undefined): void {
    this.#session?.closed();
    this.#body?.stop();
    if (this.#done) return;
    if (this.#answered && !this.#aborted && code === ErrorCode.NO_ERROR && error === undefined) {
      this.#done = true;
      this.#handler.onComplete();
      return;
    }
    const failure = this.#aborted ?? this.#streamError(code, unprocessed, error);
    // The session is going away (GOAWAY) and never processed this stream: the backend is fine, so the request
    // goes once more on a new session of the same backend, as the HTTP/1.1 client sends one again when a
    // kept-alive connection closed under it; with its body only when that can be had again whole.
    if (failure instanceof UpstreamConnectError && !this.#resent && this.#session?.retired === true) {
      const body = this.#body === null ? null : this.#request.body?.replay?.();
      if (body !== undefined) {
        this.#resent = true;
        this.#stream = undefined;
        this.#body = body;
        this.#origin.acquire(this);
        return;
      }
    }
    this.#fail(failure);
  }

  #streamError(code: number, unprocessed: boolean, cause: Error | undefined): Error {
    const { target } = this.#origin;
    const error = new Error(`h2c stream to ${endpointAddress(target)} reset (code ${code})`, { cause });
    return unprocessed && !this.#answered ? new UpstreamConnectError(target, { cause: error }) : error;
  }

  #fail(error: Error): void {
    if (this.#done) return;
    this.#done = true;
    this.#handler.onError(error);
  }
}
