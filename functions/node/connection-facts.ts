import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { NO_TRUSTED_PROXIES, type TrustedProxies } from "../core/http/trusted-proxies.js";
import { clientListenerPort, clientServerName } from "./client-tls.js";

/**
 * What the router knows of a client connection, settled once per connection and read by every request on it:
 * who the client is (the socket's peer, or the source a trusted balancer's PROXY header named) and whether
 * that client is itself a trusted proxy (TRUSTED_PROXIES), whose forwarding fields are then kept.
 */
export interface ConnectionFacts {
  /** The client's address: the PROXY header's source, else the socket's peer; undefined when unknown. */
  readonly clientIp: string | undefined;
  readonly clientPort: number | undefined;
  /** The client is a trusted proxy: its X-Forwarded-* and Forwarded are kept and extended (core/http/headers.ts). */
  readonly trustedPeer: boolean;
  /** A balancer's PROXY header named the client (proxy-header-stage.ts). */
  readonly proxied: boolean;
}

/**
 * Held on the TCP socket itself, not in a WeakMap: an HTTP/2 session hands out a Proxy of its socket, which
 * reads the socket's properties through but is no key of a map, and a TLS socket reaches its TCP socket
 * through `_parent` (Node's TLSSocket keeps the socket it wraps there).
 */
const FACTS: unique symbol = Symbol("edgeslice.connectionFacts");

interface HoldsFacts {
  [FACTS]?: ConnectionFacts;
  _parent?: HoldsFacts | null;
}

/** Records what a PROXY header said of `socket` (before any request is read from it). */
export function setConnectionFacts(socket: Socket, facts: ConnectionFacts): void {
  (socket as HoldsFacts)[FACTS] = facts;
}

/**
 * The facts of the connection a request came on: those a PROXY header set, else the socket's peer, judged
 * against `trusted` once and kept on the socket for the connection's next requests.
 */
export function connectionFactsOf(
  socket: Socket,
  trusted: TrustedProxies = NO_TRUSTED_PROXIES,
): ConnectionFacts {
  const holder = socket as HoldsFacts;
  const held = holder[FACTS] ?? holder._parent?.[FACTS];
  if (held !== undefined) return held;
  const clientIp = socket.remoteAddress;
  const facts: ConnectionFacts = {
    clientIp,
    clientPort: socket.remotePort,
    trustedPeer: trusted.trusts(clientIp),
    proxied: false,
  };
  holder[FACTS] = facts;
  return facts;
}

/** What a TLS connection's handshake settled (tls/https-listener.ts ended it); undefined in cleartext. */
export interface TlsFacts {
  /** The name the handshake asked for (SNI), lower case (RFC 6066 §3); it chose the certificate. */
  readonly serverName: string | undefined;
  /** What ALPN chose ("h2", "http/1.1"); undefined when the client offered nothing. */
  readonly alpn: string | undefined;
  /** The Gateway listener port its router port stands for (HTTPS_LISTENER_PORTS; tls-front.ts marks it). */
  readonly listenerPort: number | undefined;
}

const TLS_FACTS: unique symbol = Symbol("edgeslice.tlsFacts");

/** The TLS facts of `socket`'s connection (an HTTP/2 session's socket reads them through), read once. */
export function tlsFactsOf(socket: Socket): TlsFacts | undefined {
  const tls = socket as Partial<TLSSocket> & { [TLS_FACTS]?: TlsFacts };
  if (tls.encrypted !== true) return undefined;
  if (tls[TLS_FACTS] !== undefined) return tls[TLS_FACTS];
  const facts: TlsFacts = {
    serverName: clientServerName(socket),
    alpn: typeof tls.alpnProtocol === "string" ? tls.alpnProtocol : undefined,
    listenerPort: clientListenerPort(socket),
  };
  tls[TLS_FACTS] = facts;
  return facts;
}
