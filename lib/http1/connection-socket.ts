import { connect, type NetConnectOpts, type Socket } from "node:net";
import type { ExchangeHandler } from "../http-exchange.js";

/** What a connection hears from its socket (client-connection.ts). */
export interface SocketListener {
  connected(): void;
  /** Bytes from the server, valid until this returns unless a handler said it holds them. */
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
 * What one read from the server may bring: twice libuv's own read size, so that a 64 KiB body and its head come
 * in one read, go out in one writev, instead of two each.
 */
const READ_BUFFER_BYTES = 128 * 1024;

/**
 * The TCP connection under one ClientConnection. Pausing stops reading at once: the server's close is read once
 * reading resumes. Reads go to one buffer (net's `onread`), read into again and again while nothing holds on to
 * what the last read brought. The parser copies what it keeps of a read; the handler given chunks of it says
 * whether it still holds them (a write the kernel did not take yet; a handler that cannot say is given copies),
 * and if it does, the next read goes to a fresh buffer. Node's 'data' events would allocate a 64 KiB buffer per
 * read instead: under a stream of large bodies that external memory, dropped as fast as it comes, is what sets
 * off V8's full collections (a mark-compact every few hundred responses). The cost: an open connection keeps
 * its buffer (the pages its reads touched stay resident) until it closes, idle ones after keepAliveTimeoutMs.
 * A connection that may be handed over on a protocol switch reads by 'data' events, so that the socket leaves
 * as any other.
 */
export class ConnectionSocket {
  readonly socket: Socket;
  readonly #listener: SocketListener;
  #paused = false;
  #buffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
  /** A chunk of the last read may still be held: the next goes to a fresh buffer. */
  #held = false;
  /** The handler given chunks of the read under way. */
  #taker: ExchangeHandler | undefined;

  constructor(
    host: string,
    port: number,
    listener: SocketListener,
    handedOver: boolean,
    connector?: SocketConnector,
  ) {
    this.#listener = listener;
    const options = { host, port, ...SOCKET_OPTIONS };
    this.socket =
      connector === undefined && !handedOver
        ? connect({ ...options, onread: { buffer: this.#next, callback: this.#onRead } })
        : (connector?.open(options) ?? connect(options)).on("data", this.#onData);
    this.socket.on(connector?.connectedEvent ?? "connect", this.#onConnect).on("end", this.#onEnd);
    this.socket.on("error", this.#onError).on("close", this.#onClose);
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
    this.#taker = handler;
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

  /** Where the next read goes. */
  readonly #next = (): Buffer => {
    if (this.#held) {
      this.#held = false;
      this.#buffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
    }
    return this.#buffer;
  };

  /** `count` bytes came into the read buffer; true: reading goes on. */
  readonly #onRead = (count: number): boolean => {
    const buffer = this.#buffer;
    this.#listener.received(count === buffer.length ? buffer : buffer.subarray(0, count));
    const taker = this.#taker;
    this.#taker = undefined;
    if (taker !== undefined && taker.holdsChunk?.() !== false) this.#held = true;
    return true;
  };
}
