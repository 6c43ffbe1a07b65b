import type { Socket } from "node:net";
import { ClientStream } from "./client-stream.js";
import { ConnectionLink } from "./connection-link.js";
import { Http2SessionError } from "./errors.js";
import { FrameReader } from "./frame-reader.js";
import {
  CLIENT_PREFACE,
  DEFAULT_MAX_FRAME_SIZE,
  DEFAULT_WINDOW,
  ErrorCode,
  goawayFrame,
  MAX_STREAM_ID,
  MAX_WINDOW,
  Setting,
  settingsFrame,
  windowUpdateFrame,
} from "./frames.js";
import type { SessionListener, StreamListener } from "./listeners.js";
import { SessionFrames } from "./session-frames.js";

export { ClientStream } from "./client-stream.js";
export { Http2SessionError, Http2StreamError } from "./errors.js";
export { ErrorCode } from "./frames.js";
export type { SessionListener, StreamListener } from "./listeners.js";

export interface SessionOptions {
  /** Our SETTINGS_INITIAL_WINDOW_SIZE (default 1 MiB): what one paused stream may hold. */
  initialStreamWindow?: number;
  /** The connection's receive window (default 16 MiB). */
  connectionWindow?: number;
  /** Our SETTINGS_MAX_HEADER_LIST_SIZE (default 64 KiB); a field block may take twice that on the wire. */
  maxHeaderListSize?: number;
}

const DEFAULT_STREAM_WINDOW = 1024 * 1024;
const DEFAULT_CONNECTION_WINDOW = 16 * 1024 * 1024;
const DEFAULT_MAX_HEADER_LIST_SIZE = 64 * 1024;
/** How long a socket we ended may take to close before it is destroyed. */
const CLOSE_GRACE_MS = 1000;

/** An HTTP/2 client connection (RFC 9113) over cleartext TCP with prior knowledge (§3.3). */
export class Http2ClientSession extends SessionFrames {
  readonly #socket: Socket;
  readonly #reader: FrameReader;
  #closing = false;
  #socketError: Error | undefined;

  constructor(socket: Socket, listener: SessionListener, options: SessionOptions = {}) {
    const streamWindow = Math.min(options.initialStreamWindow ?? DEFAULT_STREAM_WINDOW, MAX_WINDOW);
    const connectionWindow = Math.min(
      Math.max(options.connectionWindow ?? DEFAULT_CONNECTION_WINDOW, DEFAULT_WINDOW),
      MAX_WINDOW,
    );
    const maxHeaderListSize = options.maxHeaderListSize ?? DEFAULT_MAX_HEADER_LIST_SIZE;
    const link = new ConnectionLink(
      socket,
      streamWindow,
      (stream) => this.#detach(stream),
      () => this.settle(),
    );
    super(link, listener, maxHeaderListSize, connectionWindow);
    this.#socket = socket;
    this.#reader = new FrameReader(DEFAULT_MAX_FRAME_SIZE, this.onFrame, this.#onOversized);
    const settings = [Setting.ENABLE_PUSH, 0, Setting.INITIAL_WINDOW_SIZE, streamWindow];
    settings.push(Setting.MAX_HEADER_LIST_SIZE, maxHeaderListSize);
    const preface = [CLIENT_PREFACE, settingsFrame(settings)];
    // §6.9.2: SETTINGS do not change the connection window; only WINDOW_UPDATE raises it from 65,535.
    if (connectionWindow > DEFAULT_WINDOW)
      preface.push(windowUpdateFrame(0, connectionWindow - DEFAULT_WINDOW));
    link.write(Buffer.concat(preface));
    socket.on("data", this.#onData).on("end", this.#onEnd).on("close", this.#onEnd);
    socket.on("error", this.#onError).on("drain", this.flushWaiting);
  }

  /** The peer's first SETTINGS arrived (and was acknowledged). */
  get ready(): boolean {
    return this.isReady;
  }

  get destroyed(): boolean {
    return this.isDestroyed;
  }

  /** The peer's SETTINGS_MAX_CONCURRENT_STREAMS (undefined until it sets one). */
  get peerMaxConcurrentStreams(): number | undefined {
    return this.peerMaxStreams;
  }

  /** Streams opened and not yet closed (including queued ones). */
  get openStreams(): number {
    return this.streams.size + this.queue.length;
  }

  /** False once request() throws: closed, destroyed, GOAWAY received, or stream identifiers used up (§5.1.1). */
  get acceptingRequests(): boolean {
    return (
      !this.isDestroyed &&
      !this.#closing &&
      !this.goneAway &&
      this.nextId + 2 * this.queue.length <= MAX_STREAM_ID
    );
  }

  /**
   * fields: [":method", m, ":scheme", "http", ":authority", a, ":path", p, name, value, ...] lowercase. Queued
   * (not sent) until the peer's SETTINGS came and while its concurrency limit is reached (§5.1.2).
   */
  request(fields: readonly string[], endStream: boolean, listener: StreamListener): ClientStream {
    if (!this.acceptingRequests)
      throw new Http2SessionError("the HTTP/2 session takes no more requests", undefined, false);
    const stream = new ClientStream(this.link, fields, endStream, listener);
    if (this.queue.length === 0 && this.#canStart()) this.#start(stream);
    else this.queue.push(stream);
    return stream;
  }

  /** GOAWAY(NO_ERROR, last peer-initiated id 0) and close the socket once the open streams have closed. */
  close(): void {
    if (this.isDestroyed || this.#closing) return;
    this.#closing = true;
    this.link.write(goawayFrame(0, ErrorCode.NO_ERROR));
    this.settle();
  }

  /** Closes everything now: streams get onClose(code or CANCEL, unprocessed only if never sent, error); with a code, GOAWAY(code) goes first. */
  destroy(error?: Error, code?: number): void {
    if (this.isDestroyed) return;
    this.isDestroyed = true;
    this.#socket.off("data", this.#onData);
    const streamError = error ?? new Http2SessionError("the HTTP/2 session was destroyed", code, false);
    for (const stream of [...this.streams.values()])
      stream.terminate(code ?? ErrorCode.CANCEL, false, streamError);
    for (const stream of [...this.queue]) stream.terminate(code ?? ErrorCode.CANCEL, true, streamError);
    if (code === undefined) this.#socket.destroy();
    else {
      this.link.write(goawayFrame(0, code));
      this.#endSocket();
    }
    this.listener.onClose(error);
  }

  protected override connectionError(code: number, message: string, cause?: unknown): void {
    this.destroy(new Http2SessionError(message, code, false, { cause }), code);
  }

  /** Queued streams go while the peer allows; a closing session with no streams left ends. */
  protected override settle(): void {
    while (!this.isDestroyed && this.queue.length > 0 && this.#canStart()) {
      this.#start(this.queue.shift() as ClientStream);
    }
    if (this.isDestroyed || this.openStreams > 0) return;
    if (this.#closing || this.goneAway || this.nextId > MAX_STREAM_ID) {
      this.isDestroyed = true;
      this.#socket.off("data", this.#onData);
      this.#endSocket();
      this.listener.onClose(undefined);
    }
  }

  #canStart(): boolean {
    const limit = this.peerMaxStreams;
    return this.isReady && !this.goneAway && (limit === undefined || this.streams.size < limit);
  }

  /** §5.1.1: identifiers odd and increasing, in the order the HEADERS go. */
  #start(stream: ClientStream): void {
    const id = this.nextId;
    this.nextId += 2;
    this.streams.set(id, stream);
    stream.start(id);
  }

  #detach(stream: ClientStream): void {
    const id = stream.id;
    if (id !== undefined) this.streams.delete(id);
    else {
      const at = this.queue.indexOf(stream);
      if (at >= 0) this.queue.splice(at, 1);
    }
  }

  #endSocket(): void {
    const socket = this.#socket;
    this.link.flush();
    socket.end();
    const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
  }

  readonly #onData = (chunk: Buffer): void => this.#reader.push(chunk);

  readonly #onError = (error: Error): void => {
    this.#socketError ??= error;
  };

  readonly #onEnd = (): void => {
    if (this.isDestroyed) return;
    const cause = this.#socketError;
    const message =
      cause === undefined ? "the peer closed the connection" : `the connection failed: ${cause.message}`;
    this.destroy(new Http2SessionError(message, undefined, true, { cause }));
  };

  readonly #onOversized = (length: number): void => {
    if (this.isReady) {
      this.connectionError(
        ErrorCode.FRAME_SIZE_ERROR,
        `a frame of ${length} octets, above 16384 (RFC 9113 §4.2)`,
      );
    } else {
      this.connectionError(
        ErrorCode.PROTOCOL_ERROR,
        "the peer's first bytes are no HTTP/2 SETTINGS frame (RFC 9113 §3.4)",
      );
    }
  };
}
