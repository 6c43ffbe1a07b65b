import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";

/** Held on the TCP socket; a TLS socket reaches it through `_parent` (Node's TLSSocket keeps the one it wraps there). */
const LISTENER_PORT: unique symbol = Symbol("edgeslice.listenerPort");

type HoldsPort = { [LISTENER_PORT]?: number; _parent?: HoldsPort | null };

/** Records the Gateway listener port a TLS port stands for on a connection it accepted (tls-front.ts). */
export function markListenerPort(socket: Socket, listenerPort: number): void {
  (socket as HoldsPort)[LISTENER_PORT] = listenerPort;
}

/** The listener port (HTTPS_LISTENER_PORTS) the connection came to; undefined: the Host's port decides. */
export function clientListenerPort(socket: object): number | undefined {
  const holder = socket as HoldsPort;
  return holder[LISTENER_PORT] ?? holder._parent?.[LISTENER_PORT];
}

/** The SNI the client's handshake asked for, lower case (RFC 6066 §3: DNS names compare without case). */
export function clientServerName(socket: object): string | undefined {
  const name = (socket as Partial<TLSSocket>).servername;
  return typeof name === "string" && name !== "" ? name.toLowerCase() : undefined;
}
