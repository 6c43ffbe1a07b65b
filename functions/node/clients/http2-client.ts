import type { Socket } from "node:net";
import type { ExchangeHead } from "../../../lib/http-exchange.js";
import { type RequestContent, requestContentOf } from "../../../lib/http1/request-content.js";
import type { BodyListener } from "../../../lib/http2/api.js";
import { ErrorCode } from "../../../lib/http2/frames.js";
import type { ServerStream } from "../../../lib/http2/server-session.js";
import type { ProxyRoute } from "../../app/request-pipeline.js";
import type { ErrorAnswer } from "../../core/http/errors.js";
import { type ForwardingInfo, upstreamRequestHeaderList } from "../../core/http/headers.js";
import type { TrustedProxies } from "../../core/http/trusted-proxies.js";
import { h2FieldsOf, http1FieldsOf } from "../http2-front/h2-fields.js";
import { ENDED_BODY, StreamBody } from "../http2-front/stream-body.js";
import type { IncomingBody } from "../request-body.js";
import type { RequestHead } from "../request-head.js";
import { type ClientContent, ClientSide, type ClientWatcher, REFUSED } from "./client-side.js";

/** A request with content whose length was not declared: sent chunked (RFC 9113 §8.2.2 has no framing fields). */
const UNDECLARED: RequestContent = { length: undefined, transferCodings: undefined };

/**
 * An HTTP/2 client's request on its stream (lib/http2's server session): no reason phrase (RFC 9113 §8.3.2)
 * nor connection-specific field (§8.2.2) goes out, trailers are relayed. A backend failing after the head
 * resets the stream, never a clean end that would pass a cut call for a whole one.
 */
export class Http2Client extends ClientSide<IncomingBody, ServerStream> implements BodyListener {
  readonly protocol = "2.0";
  readonly #body: StreamBody | undefined;
  #watcher: ClientWatcher | undefined;
  #drained: (() => void) | undefined;
  #trailers: string[] | undefined;
  /** A chunk of the read under way went as a view of the dispatcher's read buffer. */
  #sentView = false;

  constructor(stream: ServerStream, head: RequestHead, socket: Socket, trusted: TrustedProxies) {
    const body = stream.endedWithHead ? undefined : new StreamBody(stream);
    // Routed on :authority, Host only when it is absent (RFC 9113 §8.3.1).
    const authority = stream.authority || head.host;
    super(body ?? ENDED_BODY, stream, stream.method, head, socket, trusted, authority, stream.path);
    this.#body = body;
    stream.listen(this);
  }

  get gone(): boolean {
    return this.out.isClosed && !this.out.responseEnded;
  }
  get headersSent(): boolean {
    return this.out.responded;
  }

  upstreamFields(forwarding: ForwardingInfo): string[] {
    return upstreamRequestHeaderList(http1FieldsOf(this.headers.rawHeaders), forwarding);
  }

  /** Content unless the HEADERS ended the stream (RFC 9113 §8.1), framed by its Content-Length or chunked. */
  content(): ClientContent {
    try {
      const declared = requestContentOf(this.headers.rawHeaders);
      if (this.out.endedWithHead) return declared?.length === 0 ? declared : undefined;
      return declared ?? UNDECLARED;
    } catch {
      return REFUSED;
    }
  }

  watch(watcher: ClientWatcher): void {
    this.#watcher = watcher;
  }

  writeHead(head: ExchangeHead, route: ProxyRoute): void {
    // HTTP/2 has no transfer codings (RFC 9113 §8.2.2): an answer the backend applied one to cannot be relayed.
    const fields = h2FieldsOf(head.status, this.relayedFields(head, route, false));
    this.out.respond(fields, head.endStream === true);
  }

  /** A view goes as it is: holdsChunk() then tells whether the stream or its socket still holds it. */
  data(chunk: Buffer, view: boolean): boolean {
    if (view) this.#sentView = true;
    return this.out.write(chunk);
  }

  override holdsChunk(): boolean {
    if (!this.#sentView) return false;
    this.#sentView = false;
    return this.out.holdsWrites();
  }

  whenDrained(resume: () => void): void {
    this.#drained = resume;
  }

  override trailers(fields: string[]): void {
    this.#trailers = fields;
  }

  end(): void {
    const trailers = this.#trailers;
    this.out.end(trailers === undefined ? undefined : h2FieldsOf(undefined, trailers));
  }

  abort(byRouter: boolean): void {
    this.out.reset(byRouter ? ErrorCode.CANCEL : ErrorCode.INTERNAL_ERROR);
  }

  answer({ status, headers, body }: ErrorAnswer): void {
    const stream = this.out;
    if (stream.responded || stream.isClosed) return;
    const fields = h2FieldsOf(status, headers.flat());
    if (body === "") stream.respond(fields, true);
    else {
      const content = Buffer.from(body);
      fields.push("content-length", String(content.length));
      stream.respond(fields, false);
      stream.write(content);
      // Once it went, the stream asks a client still sending its request to stop (RFC 9113 §8.1).
      stream.end();
    }
  }

  onData(chunk: Buffer): void {
    this.#body?.data(chunk);
  }

  /** Request trailers are not forwarded: an HTTP/1.1 backend would need them chunked, and none is asked for. */
  onTrailers(): void {}

  onEnd(): void {
    this.#body?.ended();
  }

  onDrain(): void {
    const drained = this.#drained;
    this.#drained = undefined;
    drained?.();
  }

  onClose(): void {
    this.#body?.closed();
    this.#watcher?.clientClosed();
  }
}
