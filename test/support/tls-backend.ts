import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from "node:net";
import { connect, createServer } from "node:tls";
import type { TestCertificate } from "./certificates.js";

/**
 * A backend that ends TLS itself (what a TLSRoute passes connections to), on loopback: each connection is
 * greeted with one line naming the backend, the server name it was asked for and whether a client certificate
 * came, then everything the client sends is echoed back.
 */
export interface TlsBackend {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  /** Connections whose handshake completed. */
  connections(): number;
  close(): Promise<void>;
}

export function startTlsBackend(name: string, certificate: TestCertificate): Promise<TlsBackend> {
  return startEchoServer(name, (greet) => {
    const server = createServer({ cert: certificate.cert, key: certificate.key }, (socket) =>
      greet(socket, socket.servername || "-"),
    );
    server.on("tlsClientError", () => undefined);
    return server;
  });
}

/**
 * A cleartext TCP backend (what a TLSRoute of a Terminate listener sends the decrypted bytes to), greeting as
 * startTlsBackend's do, with no server name (`sni=-`), then echoing.
 */
export function startTcpBackend(name: string): Promise<TlsBackend> {
  return startEchoServer(name, (greet) => createTcpServer((socket) => greet(socket, "-")));
}

/** Listens on loopback with the server `serve` makes; each connection it hands `greet` is greeted, then echoed. */
async function startEchoServer(
  name: string,
  serve: (greet: (socket: Socket, serverName: string) => void) => Server,
): Promise<TlsBackend> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = serve((socket, serverName) => {
    connections++;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.write(`${name} sni=${serverName}\n`);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    name,
    host: "127.0.0.1",
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What a TLS client saw of one connection: the greeting line, the server certificate's names, or the error. */
export interface TlsDial {
  readonly greeting?: string;
  /** subjectaltname of the certificate the client was shown. */
  readonly names?: string;
  /** The echo of a line the client sent after the greeting. */
  readonly echo?: string;
  /** Node's error code when the connection failed (ECONNRESET, ERR_SSL_TLSV1_UNRECOGNIZED_NAME ...), or "closed". */
  readonly error?: string;
}

/**
 * Dials `port` on loopback with TLS and server name `servername`, trusting `ca`; reads the greeting and one
 * echo (`handshakeOnly`: only the certificate's names). A connection closed before that is `{ error }`.
 */
export function dialTls(
  port: number,
  servername: string | undefined,
  options: { ca?: string; cert?: string; key?: string; timeoutMs?: number; handshakeOnly?: boolean } = {},
): Promise<TlsDial> {
  return new Promise((resolve) => {
    const socket = connect({
      host: "127.0.0.1",
      port,
      ...(servername === undefined ? {} : { servername }),
      ...(options.ca ? { ca: options.ca } : { rejectUnauthorized: false }),
      ...(options.cert ? { cert: options.cert, key: options.key } : {}),
    });
    let text = "";
    let names: string | undefined;
    let done = false;
    const finish = (result: TlsDial) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ error: "timeout" }), options.timeoutMs ?? 5_000);
    socket.once("secureConnect", () => {
      names = socket.getPeerCertificate().subjectaltname;
      if (options.handshakeOnly) finish({ names });
    });
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      const lines = text.split("\n");
      if (lines.length === 2) socket.write("ping\n");
      if (lines.length >= 3) finish({ greeting: lines[0], names, echo: lines[1] });
    });
    socket.once("error", (error: NodeJS.ErrnoException) => finish({ error: error.code ?? error.message }));
    socket.once("close", () => finish({ error: "closed" }));
  });
}
