import type { TLSSocket } from "node:tls";

/**
 * The name a client's TLS handshake asked for (SNI), lower case (RFC 6066 §3: DNS names compare without case);
 * undefined in cleartext or when the client sent none. The routing core chooses the listener by it.
 */
export function clientServerName(socket: object | undefined): string | undefined {
  const name = (socket as Partial<TLSSocket> | undefined)?.servername;
  return typeof name === "string" && name !== "" ? name.toLowerCase() : undefined;
}
