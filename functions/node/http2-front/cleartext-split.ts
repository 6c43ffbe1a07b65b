import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Http2Front } from "./http2-front.js";

/** The HTTP/2 connection preface a prior-knowledge client sends first (RFC 9113 §3.4). */
export const HTTP2_PREFACE: Buffer = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * What a connection's first bytes say: "http2" once they hold the whole preface, "http1" as soon as one
 * byte differs from it, "undecided" while they are a proper prefix of it (a preface split across packets).
 * No HTTP/1.1 request starts with "PRI " (RFC 9113 §3.4 chose the method for that), so the first byte
 * decides almost every HTTP/1.1 connection.
 */
export function prefaceVerdict(bytes: Uint8Array): "http2" | "http1" | "undecided" {
  const length = Math.min(bytes.length, HTTP2_PREFACE.length);
  for (let i = 0; i < length; i++) if (bytes[i] !== HTTP2_PREFACE[i]) return "http1";
  return length === HTTP2_PREFACE.length ? "http2" : "undecided";
}

export type CleartextSplit = ReturnType<typeof splitCleartext>;

/**
 * h2c with prior knowledge on the HTTP/1.1 listener (RFC 9113 §3.3): `server`'s connections that open with the
 * preface go to `front`, the others to the HTTP/1.1 server as before. The first chunk is put back (unshift) for
 * whichever takes the connection: no copy, and an HTTP/1.1 connection costs one comparison of its first byte. A
 * partial preface is gathered until whole or a byte differs; one that stalls for `firstBytesTimeoutMs` (the
 * HTTP/1.1 head's bound) is closed. The Upgrade to h2c stays with HTTP/1.1 (RFC 9113 deprecates it); TLS
 * connections the HTTPS listener hands over go straight through.
 */
export function splitCleartext(server: Server, front: Http2Front, firstBytesTimeoutMs: number) {
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
    // On the timeout, and on a reset before the first bytes: nobody else listens on the socket yet.
    const destroy = () => socket.destroy();
    const onClose = () => undecided.delete(socket);
    const onData = (chunk: Buffer) => {
      const bytes = gathered ? Buffer.concat([gathered, chunk]) : chunk;
      const verdict = prefaceVerdict(bytes);
      if (verdict === "undecided") {
        gathered = bytes;
        return;
      }
      socket.off("data", onData);
      socket.off("close", onClose);
      socket.off("error", destroy);
      socket.setTimeout(0, destroy);
      undecided.delete(socket);
      // Put back for the next reader: the HTTP/2 session resumes the (paused) socket and reads the chunk first;
      // with no 'data' listener now, the chunk waits for the HTTP/1.1 server's.
      if (verdict === "http2") socket.pause();
      socket.unshift(bytes);
      if (verdict === "http2") front.accept(socket);
      else for (const listener of http1) listener.call(server, socket);
    };
    socket.on("data", onData);
    socket.once("close", onClose);
    socket.on("error", destroy);
    socket.setTimeout(firstBytesTimeoutMs, destroy);
  });
  return {
    /** Closes the connections whose first bytes have not arrived yet (the router is stopping). */
    destroyUndecided(): void {
      for (const socket of undecided) socket.destroy();
      undecided.clear();
    },
  };
}
