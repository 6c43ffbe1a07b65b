import { createServer, IncomingMessage, type Server } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { RouterConfig } from "../core/settings/config.js";
import type { RequestHandler } from "./request-handler.js";
import { SERVER_MAX_HEADERS_COUNT } from "./request-head.js";

/** Names h2c among the protocols of an Upgrade field value (RFC 9110 §7.8: comma-separated, case-insensitive). */
const NAMES_H2C = /(?:^|,)[ \t]*h2c[ \t]*(?:,|$)/i;

const ASKED = Symbol("edgeslice.upgradeAsked");

/**
 * http.Server's request, except that one asking to upgrade to h2c is no upgrade: Node would hand it to 'upgrade'
 * with the raw socket, tunnelled to a backend, and every request sent through that tunnel would pass the routing
 * unseen. RFC 9113 §3.1 obsoletes the h2c upgrade and a server may ignore an Upgrade (RFC 9110 §7.8): it is served
 * as plain HTTP/1.1 (Upgrade is hop-by-hop). Node's parser still stops after it as for an upgrade, dropping what
 * the client sent next in the same packet, so its answer closes the connection: a client that pipelined more sees
 * them unanswered on a closed connection, never lost. Node sets `upgrade` before it adds the header fields and
 * reads it after, so it is decided when read.
 */
class RouterIncomingMessage extends IncomingMessage {
  declare [ASKED]: boolean | null;
  declare readonly upgrade: boolean;
}
Object.defineProperty(RouterIncomingMessage.prototype, "upgrade", {
  get(this: RouterIncomingMessage): boolean {
    return this[ASKED] === true && !asksForH2c(this.rawHeaders);
  },
  set(this: RouterIncomingMessage, asked: boolean | null) {
    this[ASKED] = asked;
  },
});

function asksForH2c(rawHeaders: readonly string[]): boolean {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length !== 7 || name.toLowerCase() !== "upgrade") continue;
    if (NAMES_H2C.test(rawHeaders[i + 1] as string)) return true;
  }
  return false;
}

/**
 * The HTTP/1.1 front on PORT: Node's http.Server, whose requests and upgrades go to the request handler. The
 * HTTPS listener hands it its http/1.1 connections too (tls/https-listener.ts), and the HTTP/2 front takes the
 * connections that open with the HTTP/2 preface (http2-front/cleartext-split.ts).
 */
export function createHttp1Front(
  handler: Pick<RequestHandler, "http1" | "upgrade">,
  config: Pick<RouterConfig, "clientKeepAliveTimeoutMs" | "clientHeadersTimeoutMs">,
): Server {
  const server = createServer({ IncomingMessage: RouterIncomingMessage }, (incoming, outgoing) => {
    // An upgrade the router declined (h2c): its answer closes the connection.
    if (incoming[ASKED] === true && !incoming.upgrade) outgoing.shouldKeepAlive = false;
    handler.http1(incoming, outgoing);
  });
  server.on("upgrade", (incoming: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (socket instanceof Socket) handler.upgrade(incoming, socket, head);
    else socket.destroy();
  });
  server.maxHeadersCount = SERVER_MAX_HEADERS_COUNT;
  // Both above a load balancer's idle timeout, so it closes an idle connection before the router does (config.ts).
  server.keepAliveTimeout = config.clientKeepAliveTimeoutMs;
  server.headersTimeout = config.clientHeadersTimeoutMs;
  return server;
}
