import { type IncomingMessage, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { ExchangeHead } from "../../../lib/http-exchange.js";
import type { ProxyRoute } from "../../app/request-pipeline.js";
import type { ErrorAnswer } from "../../core/http/errors.js";
import {
  type ForwardingInfo,
  hasBody,
  reasonPhrase,
  upgradeResponseHeaderList,
  upstreamUpgradeHeaderList,
} from "../../core/http/headers.js";
import { REQUEST_ID_HEADER } from "../../core/http/request-id.js";
import type { TrustedProxies } from "../../core/http/trusted-proxies.js";
import type { RequestHead } from "../request-head.js";
import { endThenDestroy, joinSockets } from "../tunnel.js";
import { type ClientContent, REFUSED, WritableClientSide } from "./client-side.js";

/**
 * An HTTP/1.1 Upgrade (WebSocket) on the raw socket of http.Server's 'upgrade' (Node docs): answered byte for
 * byte, as Node's response object is gone. A 101 joins the connections (tunnel.ts); any other answer is the
 * last on the connection, which closes after it.
 */
export class UpgradeClient extends WritableClientSide<IncomingMessage, Socket> {
  override readonly upgrade = true;
  headersSent = false;
  readonly #clientHead: Buffer;
  /** Every connection of an upgrade under way or joined, cut when the router's drain ends. */
  readonly #open: Set<Socket>;

  constructor(
    incoming: IncomingMessage,
    socket: Socket,
    clientHead: Buffer,
    head: RequestHead,
    open: Set<Socket>,
    trusted: TrustedProxies,
  ) {
    super(incoming, socket, incoming.method ?? "GET", head, socket, trusted, head.host, incoming.url);
    this.#clientHead = clientHead;
    this.#open = open;
    track(socket, open);
  }

  get protocol(): string {
    return this.bodySource.httpVersion;
  }
  get gone(): boolean {
    return this.out.destroyed;
  }

  upstreamFields(forwarding: ForwardingInfo): string[] {
    return upstreamUpgradeHeaderList(this.bodySource.rawHeaders, forwarding);
  }

  /** Its bytes after the head belong to the new protocol: one that declares content (an h2c POST) is refused. */
  content(): ClientContent {
    return hasBody(this.bodySource.rawHeaders) ? REFUSED : undefined;
  }

  writeHead(head: ExchangeHead, route: ProxyRoute): void {
    this.#relayHead(head, route, false);
    this.out.resume();
  }

  /** The backend switched protocols: the 101 goes out and the connections are joined until either closes. */
  override switched(
    head: ExchangeHead,
    route: ProxyRoute,
    backend: Socket,
    rest: Buffer,
    closed: () => void,
  ): void {
    this.#relayHead(head, route, true);
    if (rest.length > 0) this.out.write(rest);
    track(backend, this.#open);
    joinSockets(this.out, backend, this.#clientHead, closed);
  }

  end(): void {
    endThenDestroy(this.out);
  }

  abort(): void {
    this.out.destroy();
  }

  /** The router's own answer (an error, a redirect): the connection closes after it. */
  answer({ status, headers, body }: ErrorAnswer): void {
    const socket = this.out;
    if (this.headersSent || socket.destroyed) return;
    // Read and drop what the client still sends: closing with unread bytes resets the connection, answer and all.
    socket.resume();
    const fields: string[] = [];
    for (const [name, value] of headers) if (name !== "connection") fields.push(name, value);
    fields.push("content-length", String(Buffer.byteLength(body)), "connection", "close");
    this.#writeHead(status, undefined, fields);
    socket.write(body);
    endThenDestroy(socket);
  }

  /** The backend's head, Upgrade kept; a declined upgrade's answer says the connection closes. */
  #relayHead(head: ExchangeHead, route: ProxyRoute, switched: boolean): void {
    const fields = upgradeResponseHeaderList(head.fields, switched, route.responseHeaders);
    fields.push(REQUEST_ID_HEADER, route.observation.requestId);
    this.#writeHead(switched ? 101 : head.status, head.reason, fields);
  }

  /** Field values came from the backend's parsed head (Latin-1) or the router: written back byte for byte. */
  #writeHead(status: number, reason: string | undefined, fields: readonly string[]): void {
    this.headersSent = true;
    let text = `HTTP/1.1 ${status} ${reasonPhrase(reason) ?? STATUS_CODES[status] ?? ""}\r\n`;
    for (let i = 0; i + 1 < fields.length; i += 2) text += `${fields[i]}: ${fields[i + 1]}\r\n`;
    this.out.write(`${text}\r\n`, "latin1");
  }
}

function track(socket: Socket, open: Set<Socket>): void {
  open.add(socket);
  // A socket Node no longer watches must never throw from an 'error' without a listener.
  socket.on("error", () => undefined);
  socket.once("close", () => open.delete(socket));
}
