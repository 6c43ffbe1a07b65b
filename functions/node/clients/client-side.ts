import type { Socket } from "node:net";
import type { Readable } from "node:stream";
import type { ExchangeHead } from "../../../lib/http-exchange.js";
import type { RequestContent } from "../../../lib/http1/request-content.js";
import type { PipelineRequest, ProxyRoute } from "../../app/request-pipeline.js";
import type { ErrorAnswer } from "../../core/http/errors.js";
import { downstreamResponseHeaderList, type ForwardingInfo } from "../../core/http/headers.js";
import { REQUEST_ID_HEADER } from "../../core/http/request-id.js";
import type { TrustedProxies } from "../../core/http/trusted-proxies.js";
import { type ConnectionFacts, connectionFactsOf, type TlsFacts, tlsFactsOf } from "../connection-facts.js";
import { relayFraming } from "../relayed-framing.js";
import type { RequestHead } from "../request-head.js";
import { requestUrl } from "../request-url.js";

/** Told once when the client's answer closes: sent whole, or the client went away first. */
export interface ClientWatcher {
  clientClosed(): void;
}

/** The request's content as it goes upstream; REFUSED when its framing cannot be read reliably (RFC 9112 §6.3). */
export type ClientContent = RequestContent | undefined | typeof REFUSED;
export const REFUSED = "refused";

const TEXT = "text/plain; charset=UTF-8";

/**
 * The client's side of one exchange, whichever front it came through: what it asked (the pipeline's request,
 * its head read once, its connection's facts) and how its answer is written. The request handler and the
 * exchange speak only to this; each protocol's way of writing is one subclass (http1-client.ts,
 * http2-client.ts, upgrade-client.ts).
 */
export abstract class ClientSide implements PipelineRequest {
  readonly method: string;
  /** The URL routed on (request-url.ts); "" when it cannot be read (400). */
  readonly url: string;
  readonly head: RequestHead;
  /** Who the client is (its address, or a trusted balancer's PROXY header's), read once per connection. */
  readonly facts: ConnectionFacts;
  /** What the TLS handshake settled (SNI, ALPN, the port it came to); undefined in cleartext. */
  readonly tls: TlsFacts | undefined;
  /** An HTTP/1.1 upgrade (WebSocket): a 101 joins the connections. */
  readonly upgrade: boolean = false;
  /** Where the request's body is read from (flow-controlled, read only while an attempt asks for it). */
  abstract readonly bodySource: Readable;
  /** The client went away before its answer was sent whole. */
  abstract readonly gone: boolean;
  /** The answer's head went out. */
  abstract readonly headersSent: boolean;
  /** The HTTP version the client spoke, for the access log. */
  abstract readonly protocol: string;

  constructor(
    method: string,
    head: RequestHead,
    socket: Socket,
    trusted: TrustedProxies,
    authority: string | undefined,
    target: string | undefined,
  ) {
    this.method = method;
    this.head = head;
    this.facts = connectionFactsOf(socket, trusted);
    this.tls = tlsFactsOf(socket);
    this.url = requestUrl(this.tls ? "https" : "http", authority, target) ?? "";
  }

  get headers(): RequestHead {
    return this.head;
  }
  get requestId(): string | undefined {
    return this.head.requestId;
  }
  get proto(): "http" | "https" {
    return this.tls ? "https" : "http";
  }
  get serverName(): string | undefined {
    return this.tls?.serverName;
  }
  get listenerPort(): number | undefined {
    return this.tls?.listenerPort;
  }
  get clientIp(): string | undefined {
    return this.facts.clientIp;
  }
  get connectionFields(): string | null {
    return this.head.connection ?? null;
  }
  get trustedPeer(): boolean {
    return this.facts.trustedPeer;
  }
  /** The authority the request names: its Host (HTTP/2: :authority, else Host). */
  get authority(): string | undefined {
    return this.head.host;
  }

  /** The request's fields as they go upstream (core/http/headers.ts rules), Host first. */
  abstract upstreamFields(forwarding: ForwardingInfo): string[];
  /** How its content is framed as it goes upstream (undefined: it has none). */
  abstract content(): ClientContent;
  /** `watcher` hears when the answer closes (sent whole, or the client left). */
  abstract watch(watcher: ClientWatcher): void;
  /**
   * Writes a backend's response head with the route's response fields and the request id; throws when it
   * cannot be relayed as it came (a 502 then, as any answer the router cannot pass on).
   */
  abstract writeHead(head: ExchangeHead, route: ProxyRoute): void;
  /** A chunk of the body; `view`: of a read buffer the dispatcher reuses unless holdsChunk says it is held. */
  abstract data(chunk: Buffer, view: boolean): boolean;
  /** `resume` runs once the client took what data() could not. */
  abstract whenDrained(resume: () => void): void;
  /** Whether a chunk given as a view is still held (lib/http-exchange.ts holdsChunk). */
  holdsChunk(): boolean {
    return false;
  }
  /** The response's trailer fields; only HTTP/2 carries them. */
  trailers(_fields: string[]): void {}
  abstract end(): void;
  /** Ends the answer abruptly after its head: the backend failed mid-body, or the router cut it. */
  abstract abort(byRouter: boolean): void;
  /** The router's own answer: nothing was written yet. */
  abstract answer(answer: ErrorAnswer): void;

  /** An exception while serving: a 500 before the head (text, as Hono's default handler answers), a cut after. */
  failed(error: unknown): void {
    console.error(error);
    if (this.headersSent) this.abort(false);
    else this.answer({ status: 500, headers: [["content-type", TEXT]], body: "Internal Server Error" });
  }

  /**
   * A backend's fields as the client gets them (core/http/headers.ts: hop-by-hop gone, the route's modifier applied,
   * the request id), framing completed for `speaks11` (relayed-framing.ts); throws when it cannot be relayed.
   */
  protected relayedFields(head: ExchangeHead, route: ProxyRoute, speaks11: boolean): string[] {
    const id = [REQUEST_ID_HEADER, route.observation.requestId] as const;
    const fields = downstreamResponseHeaderList(head.fields, route.responseHeaders, id);
    const unrelayable = relayFraming(head, fields, speaks11);
    if (unrelayable) throw unrelayable;
    return fields;
  }
  /** The backend switched protocols (101): the connections are joined; `closed` once both are (upgrades only). */
  switched?(head: ExchangeHead, route: ProxyRoute, backend: Socket, rest: Buffer, closed: () => void): void;
}
