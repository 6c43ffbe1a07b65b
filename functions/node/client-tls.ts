import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";

/** Held on the TCP socket; a TLS socket reaches it through `_parent` (Node's TLSSocket keeps the one it wraps there). */
const LISTENER_PORT: unique symbol = Symbol("edgeslice.listenerPort");

interface HoldsPort {
  [LISTENER_PORT]?: number;
  _parent?: HoldsPort | null;
}

/** Records the Gateway listener port a TLS port stands for on a connection it accepted (tls-front.ts). */
export function markListenerPort(socket: Socket, listenerPort: number): void {
  (socket as HoldsPort)[LISTENER_PORT] = listenerPort;
}

/**
 * The Gateway listener port a client's connection was made to, when its router port says it (a port of
 * HTTPS_LISTENER_PORTS); undefined otherwise, and the Host's port (or the scheme's default) decides.
 */
export function clientListenerPort(socket: object | undefined): number | undefined {
  const holder = socket as HoldsPort | undefined;
  return holder?.[LISTENER_PORT] ?? holder?._parent?.[LISTENER_PORT];
}

/**
 * The name a client's TLS handshake asked for (SNI), lower case (RFC 6066 §3: DNS names compare without case);
 * undefined in cleartext or when the client sent none. The routing core chooses the listener by it.
 */
export function clientServerName(socket: object | undefined): string | undefined {
  const name = (socket as Partial<TLSSocket> | undefined)?.servername;
  return typeof name === "string" && name !== "" ? name.toLowerCase() : undefined;
}
