import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Http2Front } from "./http2-front.js";
import { prefaceVerdict } from "./preface.js";

export interface CleartextSplit {
  /** Closes the connections whose first bytes have not arrived yet (the router is stopping). */
  destroyUndecided(): void;
}

/**
 * h2c with prior knowledge on the HTTP/1.1 listener (RFC 9113 §3.3): `server`'s connections that open with
 * the HTTP/2 preface go to `front`, every other one to the HTTP/1.1 server as before. The first chunk is read
 * once and put back (unshift) for whichever protocol takes the connection: no copy, and an HTTP/1.1
 * connection costs one comparison of its first byte. A preface split across packets is gathered until it is
 * whole or a byte differs; a connection that sends fewer bytes and stalls for `firstBytesTimeoutMs` (the
 * same bound as an HTTP/1.1 head) is closed. The HTTP/1.1 Upgrade to h2c is not this: it stays with the
 * HTTP/1.1 server (RFC 9113 deprecates it). TLS connections the HTTPS listener hands over go straight through.
 */
export function splitCleartext(
  server: Server,
  front: Http2Front,
  firstBytesTimeoutMs: number,
): CleartextSplit {
  const http1 = server.listeners("connection") as ((this: Server, socket: Socket) => void)[];
  server.removeAllListeners("connection");
  const undecided = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    // The HTTPS listener's http/1.1 connections: ALPN has chosen already.
    if ((socket as Partial<TLSSocket>).encrypted) {
      for (const listener of http1) listener.call(server, socket);
      return;
    }
    let gathered: Buffer | undefined;
    undecided.add(socket);
    const onTimeout = () => socket.destroy();
    const onClose = () => undecided.delete(socket);
    // A reset before the first bytes: nobody else listens on the socket yet.
    const onError = () => socket.destroy();
    const onData = (chunk: Buffer) => {
      const bytes = gathered ? Buffer.concat([gathered, chunk]) : chunk;
      const verdict = prefaceVerdict(bytes);
      if (verdict === "undecided") {
        gathered = bytes;
        return;
      }
      socket.off("data", onData);
      socket.off("close", onClose);
      socket.off("error", onError);
      socket.setTimeout(0, onTimeout);
      undecided.delete(socket);
      if (verdict === "http2") {
        // Node's HTTP/2 session reads what is buffered in the socket before it takes over its reads.
        socket.pause();
        socket.unshift(bytes);
        front.accept(socket);
      } else {
        // No 'data' listener now: the chunk waits in the buffer for the HTTP/1.1 server's.
        socket.unshift(bytes);
        for (const listener of http1) listener.call(server, socket);
      }
    };
    socket.on("data", onData);
    socket.once("close", onClose);
    socket.on("error", onError);
    socket.setTimeout(firstBytesTimeoutMs, onTimeout);
  });
  return {
    destroyUndecided() {
      for (const socket of undecided) socket.destroy();
      undecided.clear();
    },
  };
}
