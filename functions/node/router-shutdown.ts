import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "../../lib/logger.js";
import type { CleartextSplit } from "./http2-front/cleartext-split.js";
import type { Http2Front } from "./http2-front/http2-front.js";
import type { HttpsListener } from "./tls/https-listener.js";

/** What the router's listeners are, for its shutdown. */
export interface RouterListeners {
  readonly server: Server;
  readonly adminServer: Server;
  readonly http2: Http2Front;
  readonly split: CleartextSplit;
  readonly sampling: NodeJS.Timeout;
  readonly drainMs: number;
  readonly logger: Logger;
}

/** What the router holds besides its listeners: each closed once the requests drained. */
export interface RouterParts {
  /** HTTPS_PORT's listener, once it listens. */
  readonly https: HttpsListener | undefined;
  readonly handler: { readonly upgraded: Iterable<Socket> };
  readonly dispatchers: { destroy(): void };
  readonly backendTls: { close(): void } | undefined;
  readonly store: { close(): Promise<void> };
  readonly otel: { shutdown(): Promise<void> } | undefined;
}

/** Stops accepting, drains for up to drainMs, then cuts what is left and closes the pools and the store. */
export class RouterShutdown {
  readonly #parts: RouterParts;
  readonly #listeners: RouterListeners;
  #closing: Promise<void> | undefined;

  constructor(parts: RouterParts, listeners: RouterListeners) {
    this.#parts = parts;
    this.#listeners = listeners;
  }

  /** The same promise however often it is called. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const { server, adminServer, http2, drainMs } = this.#listeners;
    const parts = this.#parts;
    clearInterval(this.#listeners.sampling);
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    this.#listeners.split.destroyUndecided();
    const http2Drained = http2.close();
    // Its ports' connections: passed-through ones are cut with the upgrades at the bound.
    const httpsDrained = parts.https?.close();
    // Admin answers are short: an idle scrape connection is closed now, a busy one when the drain ends.
    adminServer.close();
    adminServer.closeIdleConnections();
    // A keep-alive connection turns idle when its last response ends; close those as they appear.
    server.closeIdleConnections();
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    // Upgraded connections (WebSockets) are no longer the HTTP server's: closeAllConnections misses them.
    const bound = setTimeout(() => {
      server.closeAllConnections();
      for (const socket of parts.handler.upgraded) socket.destroy();
      parts.https?.destroyAll();
    }, drainMs);
    await Promise.all([drained, http2Drained, httpsDrained]);
    adminServer.closeAllConnections();
    clearInterval(sweep);
    clearTimeout(bound);
    parts.dispatchers.destroy();
    parts.backendTls?.close();
    await parts.store.close();
    await parts.otel?.shutdown();
    this.#listeners.logger.info("router stopped");
  }
}
