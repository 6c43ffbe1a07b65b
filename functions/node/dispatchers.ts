import type { ExchangeHandler, OutgoingRequest } from "../../lib/http-exchange.js";
import type { UpstreamTarget } from "../transports/upstream.js";

/**
 * One upstream protocol's way to a backend: the exchange's only view of the wire (lib/http-exchange.ts is the
 * seam: request out, head, body, trailers and end back). Two exist: HTTP/1.1 (http1-dispatcher.ts) and h2c
 * (h2c/h2c-pools.ts). A new protocol to pods (TLS, say) is one more, registered in `Dispatchers`; the
 * exchange, its retries and timeouts stay as they are.
 */
export interface Dispatcher {
  dispatch(target: UpstreamTarget, request: OutgoingRequest, handler: ExchangeHandler): void;
  /** Backends with connections or sessions open (metrics and tests). */
  readonly origins: number;
  /** Lets requests under way finish, then closes every connection. */
  close(): Promise<void>;
  /** Closes every connection at once, failing requests under way. */
  destroy(): void;
}

/** The protocols a backend may speak (store/services.ts BackendProtocol; undefined and "ws" are HTTP/1.1). */
export type UpstreamProtocol = "http1" | "h2c";

/**
 * The dispatcher of each upstream protocol, and which one a backend takes. An upgrade (WebSocket) is HTTP/1.1's
 * alone: a backend that speaks only HTTP/2 cannot carry it (docs/design.md, router rule 7). A backend whose
 * port has a BackendTLSPolicy (`https`) takes the HTTPS dispatcher (HTTP/1.1 over TLS, upgrades included), and
 * none when the router has none: it is never sent to in cleartext.
 */
export class Dispatchers {
  readonly #byProtocol: Readonly<Record<UpstreamProtocol, Dispatcher>>;
  readonly #https: Dispatcher | undefined;

  constructor(byProtocol: Readonly<Record<UpstreamProtocol, Dispatcher>> & { readonly https?: Dispatcher }) {
    this.#byProtocol = byProtocol;
    this.#https = byProtocol.https;
  }

  /** The dispatcher for a request to `target`; undefined when its protocol cannot carry the request. */
  for(target: UpstreamTarget, upgrade: boolean): Dispatcher | undefined {
    if (target.protocol === "https") return this.#https;
    if (target.protocol !== "h2c") return this.#byProtocol.http1;
    return upgrade ? undefined : this.#byProtocol.h2c;
  }

  get http1(): Dispatcher {
    return this.#byProtocol.http1;
  }

  get origins(): number {
    return this.#byProtocol.http1.origins + this.#byProtocol.h2c.origins + (this.#https?.origins ?? 0);
  }

  async close(): Promise<void> {
    await Promise.all([this.#byProtocol.http1.close(), this.#byProtocol.h2c.close(), this.#https?.close()]);
  }

  destroy(): void {
    this.#byProtocol.http1.destroy();
    this.#byProtocol.h2c.destroy();
    this.#https?.destroy();
  }
}
