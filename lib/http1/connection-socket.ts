import { connect, type NetConnectOpts, type Socket } from "node:net";
import type { ExchangeHandler } from "../http-exchange.js";
import { ReadBuffer } from "./read-buffer.js";

/** What a connection hears from its socket (client-connection.ts). */
export interface SocketListener {
  connected(): void;
  /** Bytes from the server, valid until this returns unless a handler said it holds them (read-buffer.ts). */
  received(bytes: Buffer): void;
  ended(): void;
  failed(error: Error): void;
  closed(): void;
}

/**
 * How a connection's socket is opened when not over plain TCP (TLS to a backend: node/https-dispatcher.ts):
 * `open` makes the socket from the TCP options, and the connection counts as connected on `connectedEvent`
 * (`secureConnect` for TLS, so that a failed handshake fails the request as a connect failure would: nothing
 * of it was sent). Its sockets are read by 'data' events.
 */
export interface SocketConnector {
  open(options: NetConnectOpts): Socket;
  readonly connectedEvent: string;
}

/** TCP keep-alive finds a server that vanished mid-response (its host gone) long before bodyTimeoutMs would. */
const SOCKET_OPTIONS = { noDelay: true, keepAlive: true, keepAliveInitialDelay: 60_000 } as const;

/**
 * The TCP connection under one ClientConnection. Reads go to one buffer reused while nothing holds them
 * (read-buffer.ts); a connection that may be handed over on a protocol switch reads by 'data' events instead,
 * so that the socket leaves as any other. Pausing stops reading at once: the server's close is read once
 * reading resumes.
 */
export class ConnectionSocket {
  readonly socket: Socket;
  readonly #listener: SocketListener;
  readonly #reads = new ReadBuffer();
  #paused = false;

  constructor(
    host: string,
    port: number,
    listener: SocketListener,
    handedOver: boolean,
    connector?: SocketConnector,
  ) {
    this.#listener = listener;
    if (connector !== undefined) {
      this.socket = connector.open({ host, port, ...SOCKET_OPTIONS }).on("data", this.#onData);
    } else {
      this.socket = handedOver
        ? connect({ host, port, ...SOCKET_OPTIONS }).on("data", this.#onData)
        : connect({ host, port, ...SOCKET_OPTIONS, onread: this.#reads.onread(this.#onRead) });
    }
    const connectedEvent = connector?.connectedEvent ?? "connect";
    this.socket.on(connectedEvent, this.#onConnect).on("end", this.#onEnd).on("error", this.#onError);
    this.socket.on("close", this.#onClose);
  }

  get paused(): boolean {
    return this.#paused;
  }

  pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.socket.pause();
  }

  resume(): void {
    if (!this.#paused || this.socket.destroyed) return;
    this.#paused = false;
    this.socket.resume();
  }

  /** `handler` was given a chunk of the read under way. */
  gave(handler: ExchangeHandler): void {
    this.#reads.gave(handler);
  }

  /** The socket leaves this client, as it is: nothing more is heard of it here. */
  release(): Socket {
    this.socket.off("data", this.#onData).off("end", this.#onEnd).off("error", this.#onError);
    return this.socket.off("close", this.#onClose);
  }

  readonly #onConnect = (): void => this.#listener.connected();
  readonly #onData = (chunk: Buffer): void => this.#listener.received(chunk);
  readonly #onEnd = (): void => this.#listener.ended();
  readonly #onError = (error: Error): void => this.#listener.failed(error);
  readonly #onClose = (): void => this.#listener.closed();

  /** `bytes` bytes came into the read buffer; true: reading goes on. */
  readonly #onRead = (bytes: number): boolean => {
    this.#listener.received(this.#reads.bytes(bytes));
    this.#reads.done();
    return true;
  };
}
