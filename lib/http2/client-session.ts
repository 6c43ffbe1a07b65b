import type { Socket } from "node:net";
import {
  type ClientStream,
  Http2SessionError,
  protocolError,
  type SessionListener,
  type StreamListener,
} from "./api.js";
import { Http2Stream } from "./client-stream.js";
import { ConnectionLink, type LinkedStream } from "./connection-link.js";
import {
  CLIENT_PREFACE,
  DEFAULT_MAX_FRAME_SIZE,
  DEFAULT_WINDOW,
  ErrorCode,
  FrameReader,
  goawayFrame,
  MAX_STREAM_ID,
  Setting,
  settingsFrame,
  windowUpdateFrame,
} from "./frames.js";
import { SessionFrames } from "./session-frames.js";

export type { ClientStream, SessionListener, StreamListener } from "./api.js";
export { Http2SessionError, Http2StreamError } from "./api.js";
export { ErrorCode } from "./frames.js";

export interface SessionOptions {
  /** Our SETTINGS_INITIAL_WINDOW_SIZE (default 1 MiB): what one paused stream may hold. */
  initialStreamWindow?: number;
  /** The connection's receive window (default 16 MiB, at least 65,535). */
  connectionWindow?: number;
  /** Our SETTINGS_MAX_HEADER_LIST_SIZE (default 64 KiB); a field block may take twice that on the wire. */
  maxHeaderListSize?: number;
}

/** How long a socket we ended may take to close before it is destroyed. */
const CLOSE_GRACE_MS = 1000;

/** An HTTP/2 client connection (RFC 9113) over cleartext TCP with prior knowledge (§3.3). */
export class Http2ClientSession extends SessionFrames<Http2Stream> {
  readonly #listener: SessionListener;
  readonly #queue: Http2Stream[] = [];
  #nextId = 1;
  readonly #reader: FrameReader;
  #closing = false;

  constructor(socket: Socket, listener: SessionListener, options: SessionOptions = {}) {
    const streamWindow = options.initialStreamWindow ?? 1024 * 1024;
    const connectionWindow = Math.max(options.connectionWindow ?? 16 * 1024 * 1024, DEFAULT_WINDOW);
    const maxHeaderListSize = options.maxHeaderListSize ?? 64 * 1024;
    const detach = (stream: LinkedStream) => this.#detach(stream);
    const link = new ConnectionLink(socket, streamWindow, detach, () => this.settle());
    super(link, maxHeaderListSize, connectionWindow);
    this.#listener = listener;
    this.#reader = new FrameReader(DEFAULT_MAX_FRAME_SIZE, this.onFrame, this.#onOversized);
    const settings = [Setting.ENABLE_PUSH, 0, Setting.INITIAL_WINDOW_SIZE, streamWindow];
    settings.push(Setting.MAX_HEADER_LIST_SIZE, maxHeaderListSize);
    const preface = [CLIENT_PREFACE, settingsFrame(settings)];
    // §6.9.2: SETTINGS do not change the connection window; only WINDOW_UPDATE raises it from 65,535.
    if (connectionWindow > DEFAULT_WINDOW)
      preface.push(windowUpdateFrame(0, connectionWindow - DEFAULT_WINDOW));
    link.write(Buffer.concat(preface));
    socket.on("data", this.#onData).on("end", this.onSocketEnd).on("close", this.onSocketEnd);
    socket.on("error", this.onSocketError).on("drain", this.flushWaiting);
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
    return this.streams.size + this.#queue.length;
  }

  /** False once request() throws: closed, destroyed, GOAWAY received, or stream identifiers used up (§5.1.1). */
  get acceptingRequests(): boolean {
    const lastId = this.#nextId + 2 * this.#queue.length;
    return !this.isDestroyed && !this.#closing && !this.goneAway && lastId <= MAX_STREAM_ID;
  }

  /**
   * fields: [":method", m, ":scheme", "http", ":authority", a, ":path", p, name, value, ...] lowercase. Queued
   * (not sent) until the peer's SETTINGS came and while its concurrency limit is reached (§5.1.2).
   */
  request(fields: readonly string[], endStream: boolean, listener: StreamListener): ClientStream {
    if (!this.acceptingRequests)
      throw new Http2SessionError("the HTTP/2 session takes no more requests", undefined, false);
    const stream = new Http2Stream(this.link, fields, endStream, listener);
    if (this.#queue.length === 0 && this.#canStart()) this.#start(stream);
    else this.#queue.push(stream);
    return stream;
  }

  /** Takes no more requests; once the streams (queued ones too) have closed, GOAWAY(NO_ERROR) and the socket ends. */
  close(): void {
    if (this.isDestroyed || this.#closing) return;
    this.#closing = true;
    this.settle();
  }

  /**
   * Closes everything now: streams get onClose(code or CANCEL, unprocessed only if never sent, error). With a
   * code, GOAWAY(code) goes and the socket ends (destroyed if not closed within CLOSE_GRACE_MS); else it is destroyed.
   */
  destroy(error?: Error, code?: number): void {
    if (this.isDestroyed) return;
    this.isDestroyed = true;
    const socket = this.link.socket;
    socket.off("data", this.#onData);
    const streamError = error ?? new Http2SessionError("the HTTP/2 session was destroyed", code, false);
    for (const stream of [...this.streams.values()])
      stream.terminate(code ?? ErrorCode.CANCEL, false, streamError);
    for (const stream of [...this.#queue]) stream.terminate(code ?? ErrorCode.CANCEL, true, streamError);
    if (code === undefined) socket.destroy();
    else {
      this.link.write(goawayFrame(code));
      this.link.flush();
      socket.end();
      const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
      socket.once("close", () => clearTimeout(timer));
    }
    this.#listener.onClose(error);
  }

  protected override peerReady(): void {
    this.#listener.onReady();
  }

  protected override isIdle(id: number): boolean {
    return (id & 1) === 0 || id >= this.#nextId;
  }

  /** §8.4: a client accepts no stream from the server (push is off). */
  protected override openStream(id: number): void {
    throw protocolError(`HEADERS on stream ${id}, which we did not open (RFC 9113 §5.1)`);
  }

  protected override enablePush(value: number): void {
    if (value !== 0) throw protocolError("a server's SETTINGS_ENABLE_PUSH other than 0 (RFC 9113 §6.5.2)");
  }

  /** §6.8: streams above last-stream-id were not processed; the others may finish. */
  protected override peerGoaway(last: number, code: number): void {
    for (const [id, stream] of this.streams) if (id > last) stream.refuse();
    this.#listener.onGoaway(last, code);
    const error = new Http2SessionError(
      `GOAWAY from the peer (code ${code}, last stream ${last})`,
      code,
      true,
    );
    // Closing one may close others (a listener may reset or destroy): each is closed from where it still is.
    for (const stream of [...this.streams.values(), ...this.#queue]) {
      if ((stream.id ?? last + 1) > last) stream.terminate(ErrorCode.REFUSED_STREAM, true, error);
    }
    this.settle();
  }

  /** Queued streams go while the peer allows; a session that takes no more requests ends once idle. */
  protected override settle(): void {
    while (!this.isDestroyed && this.#queue.length > 0 && this.#canStart()) {
      this.#start(this.#queue.shift() as Http2Stream);
    }
    if (this.isDestroyed || this.openStreams > 0) return;
    if (this.#closing || this.goneAway || this.#nextId > MAX_STREAM_ID)
      this.destroy(undefined, ErrorCode.NO_ERROR);
  }

  #canStart(): boolean {
    const limit = this.peerMaxStreams;
    return this.isReady && !this.goneAway && (limit === undefined || this.streams.size < limit);
  }

  /** §5.1.1: identifiers odd and increasing, in the order the HEADERS go. */
  #start(stream: Http2Stream): void {
    const id = this.#nextId;
    this.#nextId += 2;
    this.streams.set(id, stream);
    stream.start(id);
  }

  #detach(stream: LinkedStream): void {
    this.link.waiting.delete(stream);
    if (stream.id !== undefined) this.streams.delete(stream.id);
    else {
      const queued = this.#queue.indexOf(stream as Http2Stream);
      if (queued >= 0) this.#queue.splice(queued, 1);
    }
  }

  readonly #onData = (chunk: Buffer): void => this.#reader.push(chunk);

  /** Before the peer's SETTINGS, a frame too long is most likely no HTTP/2 at all (an HTTP/1.1 answer). */
  readonly #onOversized = (length: number): void => {
    if (this.isReady)
      this.connectionError(
        ErrorCode.FRAME_SIZE_ERROR,
        `a frame of ${length} octets, above 16384 (RFC 9113 §4.2)`,
      );
    else
      this.connectionError(
        ErrorCode.PROTOCOL_ERROR,
        "the peer's first bytes are no HTTP/2 SETTINGS frame (RFC 9113 §3.4)",
      );
  };
}
