import type { ExchangeHandler, OutgoingRequest } from "../../lib/http-exchange.js";
import type { UpstreamTarget } from "../transports/upstream.js";

/**
 * One upstream protocol's way to a backend: the exchange's only view of the wire (lib/http-exchange.ts is the
 * seam: request out, head, body, trailers and end back): HTTP/1.1 (http1-dispatcher.ts), h2c (h2c/h2c-pools.ts)
 * and HTTP/1.1 over TLS (https-dispatcher.ts). The exchange, its retries and timeouts are the same over each.
 */
export interface Dispatcher {
  dispatch(target: UpstreamTarget, request: OutgoingRequest, handler: ExchangeHandler): void;
  /** Closes every connection at once, failing requests under way. */
  destroy(): void;
}

type ByProtocol = { readonly http1: Dispatcher; readonly h2c: Dispatcher; readonly https?: Dispatcher };

/**
 * The dispatcher of each upstream protocol (store/services.ts BackendProtocol; undefined and "ws" are HTTP/1.1),
 * and which one a backend takes. An upgrade (WebSocket) is HTTP/1.1's alone: a backend that speaks only HTTP/2
 * cannot carry it (docs/design.md, router rule 7). A backend whose port has a BackendTLSPolicy (`https`) takes
 * the HTTPS dispatcher (HTTP/1.1 over TLS, upgrades included), and none when the router has none: it is never
 * sent to in cleartext.
 */
export class Dispatchers {
  constructor(readonly byProtocol: ByProtocol) {}

  /** The dispatcher for a request to `target`; undefined when its protocol cannot carry the request. */
  for(target: UpstreamTarget, upgrade: boolean): Dispatcher | undefined {
    if (target.protocol === "https") return this.byProtocol.https;
    if (target.protocol !== "h2c") return this.byProtocol.http1;
    return upgrade ? undefined : this.byProtocol.h2c;
  }

  destroy(): void {
    for (const dispatcher of Object.values(this.byProtocol)) dispatcher?.destroy();
  }
}
