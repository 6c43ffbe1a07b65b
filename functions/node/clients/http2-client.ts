import { constants, type IncomingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { Socket } from "node:net";
import type { ExchangeHead } from "../../../lib/http-exchange.js";
import { type RequestContent, requestContentOf } from "../../../lib/http1/request-content.js";
import type { ProxyRoute } from "../../app/request-pipeline.js";
import type { ErrorAnswer } from "../../core/http/errors.js";
import { type ForwardingInfo, upstreamRequestHeaderList } from "../../core/http/headers.js";
import type { TrustedProxies } from "../../core/http/trusted-proxies.js";
import { addFields, http1FieldsOf } from "../http2-front/h2-fields.js";
import type { RequestHead } from "../request-head.js";
import { type ClientContent, ClientSide, REFUSED } from "./client-side.js";

/** A request with content whose length was not declared: sent chunked (RFC 9113 §8.2.2 has no framing fields). */
const UNDECLARED: RequestContent = { length: undefined, transferCodings: undefined };

const TRAILERS = Symbol("edgeslice.trailers");
type Carrier = ServerHttp2Stream & { [TRAILERS]?: string[] };

/** One shared listener for every stream (no closure per request): the backend's trailers, if it sent any. */
function onWantTrailers(this: Carrier): void {
  if (!this.destroyed) this.sendTrailers(addFields({}, this[TRAILERS] ?? []));
}

/**
 * An HTTP/2 client's request on its stream (node:http2's stream API, not its compatibility objects): no reason
 * phrase (RFC 9113 §8.3.2) nor connection-specific field (§8.2.2) goes out, trailers are relayed. A backend
 * failing after the head resets the stream, never a clean end that would pass a cut call for a whole one.
 */
export class Http2Client extends ClientSide<ServerHttp2Stream, ServerHttp2Stream> {
  readonly protocol = "2.0";
  /** The router ended its answer (Node ends a reset stream's writable side too: its flags cannot tell). */
  #ended = false;

  constructor(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    head: RequestHead,
    trusted: TrustedProxies,
  ) {
    const socket = stream.session?.socket as Socket;
    // Routed on :authority, Host only when it is absent (RFC 9113 §8.3.1).
    const authority = headers[":authority"] || head.host;
    super(stream, stream, headers[":method"] ?? "GET", head, socket, trusted, authority, headers[":path"]);
  }

  get gone(): boolean {
    return (this.bodySource.destroyed || this.bodySource.closed) && !this.#ended;
  }
  get headersSent(): boolean {
    return this.bodySource.headersSent;
  }

  upstreamFields(forwarding: ForwardingInfo): string[] {
    return upstreamRequestHeaderList(http1FieldsOf(this.headers.rawHeaders), forwarding);
  }

  /** Content unless the HEADERS ended the stream (RFC 9113 §8.1), framed by its Content-Length or chunked. */
  content(): ClientContent {
    try {
      const declared = requestContentOf(this.headers.rawHeaders);
      if (this.bodySource.endAfterHeaders) return declared?.length === 0 ? declared : undefined;
      return declared ?? UNDECLARED;
    } catch {
      return REFUSED;
    }
  }

  writeHead(head: ExchangeHead, route: ProxyRoute): void {
    // HTTP/2 has no transfer codings (RFC 9113 §8.2.2): an answer the backend applied one to cannot be relayed.
    const headers = addFields({ ":status": head.status }, this.relayedFields(head, route, false));
    const stream = this.bodySource;
    const trailing = head.trailing === true && head.endStream !== true;
    this.#ended = head.endStream === true;
    stream.respond(headers, { endStream: this.#ended, waitForTrailers: trailing });
    if (trailing) stream.on("wantTrailers", onWantTrailers);
  }

  override trailers(fields: string[]): void {
    (this.bodySource as Carrier)[TRAILERS] = fields;
  }

  end(): void {
    this.#ended = true;
    const stream = this.bodySource;
    if (!stream.writableEnded && !stream.destroyed) stream.end();
  }

  abort(byRouter: boolean): void {
    const code = byRouter ? constants.NGHTTP2_CANCEL : constants.NGHTTP2_INTERNAL_ERROR;
    if (!this.bodySource.destroyed) this.bodySource.close(code);
  }

  answer({ status, headers, body }: ErrorAnswer): void {
    const stream = this.bodySource;
    if (stream.headersSent || stream.destroyed || stream.closed) return;
    this.#ended = true;
    const fields = addFields({ ":status": status }, headers.flat());
    if (body === "") stream.respond(fields, { endStream: true });
    else {
      fields["content-length"] = Buffer.byteLength(body);
      stream.respond(fields);
      stream.end(body);
    }
    // RFC 9113 §8.1: a server that answered before the whole request came asks the client to stop sending it.
    if (!stream.endAfterHeaders) stream.close(constants.NGHTTP2_NO_ERROR);
  }
}
