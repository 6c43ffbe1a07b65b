import type { Socket } from "node:net";
import { NO_TRUSTED_PROXIES, type TrustedProxies } from "../core/trusted-proxies.js";

/**
 * What the router knows of a client connection, settled once per connection and read by every request on it:
 * who the client is (the socket's peer, or the source a trusted balancer's PROXY header named) and whether
 * that client is itself a trusted proxy (TRUSTED_PROXIES), whose forwarding fields are then kept.
 */
export interface ConnectionFacts {
  /** The client's address: the PROXY header's source, else the socket's peer; undefined when unknown. */
  readonly clientIp: string | undefined;
  readonly clientPort: number | undefined;
  /** The client is a trusted proxy: its X-Forwarded-* and Forwarded are kept and extended (core/headers.ts). */
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
