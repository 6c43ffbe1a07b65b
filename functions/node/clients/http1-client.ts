import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { ExchangeHead } from "../../../lib/http-exchange.js";
import { requestContentOf } from "../../../lib/http1/request-content.js";
import type { ProxyRoute } from "../../app/request-pipeline.js";
import type { ErrorAnswer } from "../../core/http/errors.js";
import { type ForwardingInfo, reasonPhrase, upstreamRequestHeaderList } from "../../core/http/headers.js";
import type { TrustedProxies } from "../../core/http/trusted-proxies.js";
import { drainUnreadBody } from "../drain.js";
import type { RequestHead } from "../request-head.js";
import { type ClientContent, REFUSED, WritableClientSide } from "./client-side.js";

/**
 * What may wait in the client's socket before reading from the backend stops: about what a pipe holds (its
 * 64 KiB, the socket's 16 KiB, the chunk in hand), so a typical body never stops the backend's parser.
 */
const RESPONSE_BUFFER_BYTES = 128 * 1024;

function endResponse(this: ServerResponse): void {
  this.end();
}

/**
 * An HTTP/1.x client's request on Node's objects: the head goes out with one writeHead of a flat field list (sent
 * with the first chunk in one writev), each chunk straight to the socket; no Readable, pipe or promise per chunk.
 */
export class Http1Client extends WritableClientSide<IncomingMessage, ServerResponse> {
  /** The client's socket still held bytes when the last read was handed on: chunks go as copies meanwhile. */
  #backlogged = false;
  /** A chunk of the read under way went to the client's socket as it came (a view of the read's buffer). */
  #sentAsRead = false;

  constructor(
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    head: RequestHead,
    trusted: TrustedProxies,
  ) {
    super(
      incoming,
      outgoing,
      incoming.method ?? "GET",
      head,
      incoming.socket,
      trusted,
      head.host,
      incoming.url,
    );
    // The clean-up of a body nobody read: drained, bounded, once the response closed (drain.ts).
    if (this.method !== "GET") outgoing.once("close", () => drainUnreadBody(incoming));
  }

  get protocol(): string {
    return this.bodySource.httpVersion;
  }
  get gone(): boolean {
    return this.out.destroyed && !this.out.writableFinished;
  }
  get headersSent(): boolean {
    return this.out.headersSent;
  }

  upstreamFields(forwarding: ForwardingInfo): string[] {
    return upstreamRequestHeaderList(this.bodySource.rawHeaders, forwarding);
  }

  content(): ClientContent {
    try {
      return requestContentOf(this.bodySource.rawHeaders);
    } catch {
      // Node's parser refuses such heads before they get here; the proxy would not guess either.
      return REFUSED;
    }
  }

  writeHead(head: ExchangeHead, route: ProxyRoute): void {
    // Transfer codings go to a client speaking HTTP/1.1 or later only (RFC 9112 §6.1).
    const { httpVersionMajor: major, httpVersionMinor: minor } = this.bodySource;
    const fields = this.relayedFields(head, route, major > 1 || minor >= 1);
    // The backend's reason phrase when a client may be sent it; Node's default for the status otherwise.
    this.out.writeHead(head.status, reasonPhrase(head.reason), fields);
  }

  override data(chunk: Buffer, view: boolean): boolean {
    const outgoing = this.out;
    // Behind bytes the client has not taken, a view would wait in the socket: it goes as a copy of its own
    // size, so a trickle of small reads never holds a whole read buffer each (lib/http1/connection-socket.ts).
    const copy = view && this.#backlogged && outgoing.writableLength > 0;
    if (view && !copy) this.#sentAsRead = true;
    const sent = outgoing.write(copy ? Buffer.from(chunk) : chunk);
    // Past RESPONSE_BUFFER_BYTES the write returned false, so a 'drain' is due.
    return sent || outgoing.writableLength <= RESPONSE_BUFFER_BYTES;
  }

  /**
   * Node corks the client's socket from a write until the end of the tick: what the read brought goes now, in
   * one writev still; whatever the kernel did not take stays held by the socket, chunks sent as views among it.
   */
  override holdsChunk(): boolean {
    const socket = this.out.socket;
    if (socket !== null && socket.writableCorked === 1) socket.uncork();
    this.#backlogged = this.out.writableLength > 0;
    const held = this.#sentAsRead && this.#backlogged;
    this.#sentAsRead = false;
    return held;
  }

  end(): void {
    // While the client's socket is full, end() would queue one more (empty) write behind the body: ending once
    // it drained sends the body's tail alone, as a piped stream does (its end waits for the drain too).
    if (this.out.writableNeedDrain) this.out.once("drain", endResponse);
    else this.out.end();
  }

  /** Never a clean end that would pass a truncated body for a whole one. */
  abort(): void {
    this.out.destroy();
  }

  answer({ status, headers, body }: ErrorAnswer): void {
    if (this.out.headersSent || this.out.destroyed) return;
    const fields = headers.flat();
    if (body !== "" || this.method !== "HEAD") fields.push("content-length", String(Buffer.byteLength(body)));
    // The reason given: a writeHead that threw (a field value Node refuses) left its own phrase behind.
    this.out.writeHead(status, STATUS_CODES[status] ?? "", fields);
    this.out.end(body);
  }
}
