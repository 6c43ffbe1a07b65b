import type { Socket } from "node:net";
import type { Writable } from "node:stream";
import type { ExchangeHead } from "../../../lib/http-exchange.js";
import type { RequestContent } from "../../../lib/http1/request-content.js";
import type { PipelineRequest, ProxyRoute } from "../../app/request-pipeline.js";
import type { ErrorAnswer } from "../../core/http/errors.js";
import { downstreamResponseHeaderList, type ForwardingInfo } from "../../core/http/headers.js";
import { REQUEST_ID_HEADER } from "../../core/http/request-id.js";
import type { TrustedProxies } from "../../core/http/trusted-proxies.js";
import { connectionFactsOf, tlsFactsOf } from "../connection-facts.js";
import { relayFraming } from "../relayed-framing.js";
import type { IncomingBody } from "../request-body.js";
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

const WATCHER = Symbol("edgeslice.watcher");
type Watched = Writable & { [WATCHER]?: ClientWatcher };

/** One shared 'close' listener for every answer (no closure per request). */
function onAnswerClose(this: Watched): void {
  this[WATCHER]?.clientClosed();
}

/**
 * The client's side of one exchange, whichever front it came through: what it asked (its head read once, its
 * connection's facts) and how its answer is written to `out`, one subclass per way of writing. The request
 * handler and the exchange speak only to this.
 */
export abstract class ClientSide<In extends IncomingBody = IncomingBody, Out = unknown>
  implements PipelineRequest
{
  /** The URL routed on (request-url.ts); "" when it cannot be read (400). */
  readonly url: string;
  readonly requestId: string | undefined;
  readonly connectionFields: string | null;
  /** Who the client is (its address, or a trusted balancer's PROXY header's), read once per connection. */
  readonly clientIp: string | undefined;
  readonly trustedPeer: boolean;
  readonly proto: "http" | "https";
  readonly serverName: string | undefined;
  readonly listenerPort: number | undefined;
  /** An HTTP/1.1 upgrade (WebSocket): a 101 joins the connections. */
  readonly upgrade: boolean = false;
  /** The client went away before its answer was sent whole. */
  abstract readonly gone: boolean;
  abstract readonly headersSent: boolean;
  abstract readonly protocol: string;

  /** `bodySource`: the request's body, read only while an attempt asks for it; `out`: where the answer goes. */
  constructor(
    readonly bodySource: In,
    protected readonly out: Out,
    readonly method: string,
    readonly headers: RequestHead,
    socket: Socket,
    trusted: TrustedProxies,
    authority: string | undefined,
    target: string | undefined,
  ) {
    this.requestId = headers.requestId;
    this.connectionFields = headers.connection ?? null;
    const facts = connectionFactsOf(socket, trusted);
    this.clientIp = facts.clientIp;
    this.trustedPeer = facts.trustedPeer;
    const tls = tlsFactsOf(socket);
    this.proto = tls ? "https" : "http";
    this.serverName = tls?.serverName;
    this.listenerPort = tls?.listenerPort;
    this.url = requestUrl(this.proto, authority, target) ?? "";
  }

  /** The request's fields as they go upstream (core/http/headers.ts rules), Host first. */
  abstract upstreamFields(forwarding: ForwardingInfo): string[];
  /** How its content is framed as it goes upstream (undefined: it has none). */
  abstract content(): ClientContent;

  /** `watcher` hears when the answer closes (sent whole, or the client left). */
  abstract watch(watcher: ClientWatcher): void;

  /** Writes a backend's response head; throws when it cannot be relayed as it came (a 502 then). */
  abstract writeHead(head: ExchangeHead, route: ProxyRoute): void;

  /** A body chunk; a `view` of a read buffer the dispatcher reuses is copied unless holdsChunk() tells. */
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

/** A client answered through a Node Writable (HTTP/1.1's ServerResponse, an upgrade's socket). */
export abstract class WritableClientSide<In extends IncomingBody, Out extends Writable> extends ClientSide<
  In,
  Out
> {
  watch(watcher: ClientWatcher): void {
    (this.out as Watched)[WATCHER] = watcher;
    this.out.on("close", onAnswerClose);
  }

  /** As `out` keeps what it gets, a view goes as a copy. */
  data(chunk: Buffer, view: boolean): boolean {
    return this.out.write(view ? Buffer.from(chunk) : chunk);
  }

  whenDrained(resume: () => void): void {
    this.out.once("drain", resume);
  }
}
