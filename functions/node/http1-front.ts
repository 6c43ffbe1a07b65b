import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { RouterConfig } from "../core/settings/config.js";
import { declinedUpgrade, RouterIncomingMessage } from "./declined-upgrade.js";
import { SERVER_MAX_HEADERS_COUNT } from "./request-head.js";

/** The request handler's HTTP/1.1 entries (request-handler.ts). */
export interface Http1Handler {
  readonly http1: (incoming: IncomingMessage, outgoing: ServerResponse) => void;
  readonly upgrade: (incoming: IncomingMessage, socket: Socket, head: Buffer) => void;
}

/**
 * The HTTP/1.1 front on PORT: Node's http.Server, whose requests and upgrades go to the request handler. The
 * HTTPS listener hands it its http/1.1 connections too (tls/https-listener.ts), and the HTTP/2 front takes the
 * connections that open with the HTTP/2 preface (http2/cleartext-split.ts).
 */
export function createHttp1Front(
  handler: Http1Handler,
  config: Pick<RouterConfig, "clientKeepAliveTimeoutMs" | "clientHeadersTimeoutMs">,
): Server {
  const server = createServer({ IncomingMessage: RouterIncomingMessage }, (incoming, outgoing) => {
    if (declinedUpgrade(incoming)) outgoing.shouldKeepAlive = false;
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
