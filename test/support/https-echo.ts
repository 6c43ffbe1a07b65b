import { once } from "node:events";
import { createServer, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { TestCertificate } from "./certificates.js";

/**
 * What an HTTPS echo backend saw of one request: the echo backends' fields (test/e2e/support/echo-backends.ts,
 * so host-client.ts reads it) and the TLS facts a BackendTLSPolicy test checks, as the conformance suite's
 * echo server reports them: the server name the client asked for and the client certificate it presented.
 */
export interface TlsEchoedRequest {
  readonly backend: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, unknown>;
  readonly sni: string;
  /** SHA-256 fingerprint of the client's certificate; "" when it sent none. */
  readonly clientCertificate: string;
}

/** An HTTP/1.1 backend over TLS on 127.0.0.1. */
export interface HttpsEcho {
  readonly name: string;
  readonly ip: "127.0.0.1";
  readonly port: number;
  /** Requests answered. */
  hits(): number;
  /** TLS connections whose handshake completed. */
  handshakes(): number;
  /** TLS connections open now. */
  openConnections(): number;
  close(): Promise<void>;
}

/**
 * Starts an HTTPS echo backend serving `certificate`: every request is answered 200 with TlsEchoedRequest as
 * JSON and its name in `x-backend`; an upgrade request is switched (101) and then greeted with one line
 * (`<name> sni=<name asked>`) and echoed byte for byte. With `clientCa`, a client certificate signed by it is
 * required (the handshake fails without one).
 */
export async function startHttpsEcho(
  name: string,
  certificate: TestCertificate,
  options: { readonly clientCa?: string } = {},
): Promise<HttpsEcho> {
  let hits = 0;
  let handshakes = 0;
  const sockets = new Set<Socket>();
  const mutual = options.clientCa
    ? { ca: options.clientCa, requestCert: true, rejectUnauthorized: true }
    : {};
  const server: Server = createServer(
    { cert: certificate.cert, key: certificate.key, ...mutual },
    (request, response) => {
      hits++;
      request.resume();
      request.on("end", () => {
        const socket = request.socket as TLSSocket;
        const echoed: TlsEchoedRequest = {
          backend: name,
          method: request.method ?? "",
          path: request.url ?? "",
          headers: request.headers,
          sni: socket.servername || "",
          clientCertificate: socket.getPeerCertificate()?.fingerprint256 ?? "",
        };
        response.writeHead(200, { "content-type": "application/json", "x-backend": name });
        response.end(JSON.stringify(echoed));
      });
    },
  );
  server.on("secureConnection", (socket: TLSSocket) => {
    handshakes++;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => undefined);
  server.on("upgrade", (_request, socket: Socket, head: Buffer) => {
    hits++;
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    socket.write(`${name} sni=${(socket as TLSSocket).servername || "-"}\n`);
    if (head.length > 0) socket.write(head);
    socket.on("error", () => socket.destroy());
    socket.pipe(socket);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    name,
    ip: "127.0.0.1",
    port: (server.address() as AddressInfo).port,
    hits: () => hits,
    handshakes: () => handshakes,
    openConnections: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
