import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { listenOn } from "../../../lib/listen.js";
import { MAX_CLIENT_HELLO_BYTES, readClientHello } from "../../core/tls/client-hello.js";
import { HTTPS_LISTENER_PORT, type TlsPort } from "../../core/tls/tls-ports.js";
import { markListenerPort } from "../client-tls.js";
import { type ConnectionStage, withConnectionStage } from "../proxy-header-stage.js";

/** A TLS connection whose ClientHello was read, before anything was answered. */
export interface TlsConnection {
  readonly socket: Socket;
  /** Every byte the client sent so far (its whole ClientHello, maybe more): replayed to whoever takes it. */
  readonly hello: Buffer;
  readonly serverName: string | undefined;
  /** The Gateway listener port the connection counts as made to (core/tls/tls-ports.ts). */
  readonly listenerPort: number;
}

export interface TlsFrontOptions {
  readonly ports: readonly TlsPort[];
  readonly host: string;
  /** A client whose ClientHello is not whole by then is cut, as one slow to finish its handshake is. */
  readonly helloTimeoutMs: number;
  /** Runs on each TCP connection before its ClientHello is read (PROXY_PROTOCOL: node/proxy-header-stage.ts). */
  readonly connectionStage?: ConnectionStage | undefined;
  /** Takes every connection whose ClientHello was read (passthrough, the unrecognized_name alert, or TLS). */
  readonly dispatch: (connection: TlsConnection) => void;
  /** A connection cut before it had a ClientHello: not TLS, malformed, too large, too slow, or gone. */
  readonly refused: (reason: string) => void;
}

export interface TlsFront {
  /** The ports bound, in the order given (a port 0 as the one the system chose). */
  readonly bound: readonly TlsPort[];
  /** Closes the connections whose ClientHello is still being read (the router is stopping). */
  destroyUndecided(): void;
  /** Stops accepting. */
  close(): Promise<void>;
}

/**
 * The router's TLS ports, before any TLS ends (issue 37: TLS passthrough): each connection's first bytes are
 * read until they hold a whole ClientHello (core/tls/client-hello.ts, at most MAX_CLIENT_HELLO_BYTES and
 * `helloTimeoutMs`), and the connection is handed on with them, its server name and the Gateway listener port
 * of the port it reached. Nothing is written to a client before that.
 */
export async function startTlsFront(options: TlsFrontOptions): Promise<TlsFront> {
  const undecided = new Set<PendingHello>();
  const servers: Server[] = [];
  const bound: TlsPort[] = [];
  try {
    for (const { listenerPort, port } of options.ports) {
      const server = createServer((socket) => {
        const pending = new PendingHello(socket, listenerPort, options, undecided);
        undecided.add(pending);
      });
      servers.push(server);
      if (options.connectionStage) withConnectionStage(server, options.connectionStage);
      const settings =
        listenerPort === options.ports[0]?.listenerPort
          ? { port: "HTTPS_PORT", host: "HOST" }
          : { port: "HTTPS_LISTENER_PORTS", host: "HOST" };
      await listenOn(server, { port, host: options.host }, settings);
      bound.push({ listenerPort, port: (server.address() as AddressInfo).port });
    }
  } catch (error) {
    for (const server of servers) server.close();
    throw error;
  }
  return {
    bound,
    destroyUndecided() {
      for (const pending of undecided) pending.destroy();
      undecided.clear();
    },
    close: () =>
      Promise.all(
        servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
      ).then(() => undefined),
  };
}

/** One connection until its ClientHello is whole: the bytes gathered, and the bound on the wait. */
class PendingHello {
  readonly #socket: Socket;
  readonly #listenerPort: number;
  readonly #options: TlsFrontOptions;
  readonly #undecided: Set<PendingHello>;
  #gathered: Buffer | undefined;
  readonly #onData = (chunk: Buffer) => this.#read(chunk);
  readonly #onEnd = () => this.#refuse("the client closed before its ClientHello was whole");
  // A reset before the hello: nobody else listens on the socket yet.
  readonly #onError = () => this.#refuse("the connection failed before its ClientHello was whole");
  // A bound on the whole read, not on silence: a client trickling its hello byte by byte is cut as well.
  readonly #timer: NodeJS.Timeout;

  constructor(socket: Socket, listenerPort: number, options: TlsFrontOptions, undecided: Set<PendingHello>) {
    this.#socket = socket;
    this.#listenerPort = listenerPort;
    this.#options = options;
    this.#undecided = undecided;
    socket.on("data", this.#onData);
    socket.once("end", this.#onEnd);
    socket.on("error", this.#onError);
    this.#timer = setTimeout(() => this.#refuse("no whole ClientHello in time"), options.helloTimeoutMs);
    this.#timer.unref();
  }

  destroy(): void {
    this.#stop();
    this.#socket.destroy();
  }

  #read(chunk: Buffer): void {
    const bytes = this.#gathered ? Buffer.concat([this.#gathered, chunk]) : chunk;
    const read = readClientHello(bytes);
    if (read.kind === "incomplete") {
      // The parser refuses a hello declared larger; this bounds records that never declare one.
      if (bytes.length > MAX_CLIENT_HELLO_BYTES + 1024) this.#refuse("a ClientHello larger than the bound");
      else this.#gathered = bytes;
      return;
    }
    if (read.kind === "invalid") {
      this.#refuse(read.reason);
      return;
    }
    this.#stop();
    // HTTPS_PORT's connections count as addressed to 443 or 80 by their Host, as before; the others' port is known.
    if (this.#listenerPort !== HTTPS_LISTENER_PORT) markListenerPort(this.#socket, this.#listenerPort);
    // No 'data' listener until the next owner adds its own: the bytes wait in the socket.
    this.#socket.pause();
    this.#options.dispatch({
      socket: this.#socket,
      hello: bytes,
      serverName: read.serverName,
      listenerPort: this.#listenerPort,
    });
  }

  #refuse(reason: string): void {
    this.destroy();
    this.#options.refused(reason);
  }

  #stop(): void {
    const socket = this.#socket;
    socket.off("data", this.#onData);
    socket.off("end", this.#onEnd);
    socket.off("error", this.#onError);
    clearTimeout(this.#timer);
    this.#undecided.delete(this);
  }
}
