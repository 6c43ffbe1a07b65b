import type { Socket } from "node:net";
import { Http2SessionError, protocolError } from "./api.js";
import { ConnectionLink, type LinkedStream } from "./connection-link.js";
import { type FloodKind, FrameBudget } from "./frame-budget.js";
import {
  CLIENT_PREFACE,
  DEFAULT_MAX_FRAME_SIZE,
  DEFAULT_WINDOW,
  ErrorCode,
  FrameReader,
  goawayFrame,
  rstStreamFrame,
  Setting,
  settingsFrame,
  windowUpdateFrame,
} from "./frames.js";
import { ServerStream, type StreamHost } from "./server-stream.js";
import { SessionFrames } from "./session-frames.js";

export type { FloodKind } from "./frame-budget.js";
export { ServerStream } from "./server-stream.js";

export interface ServerSessionListener {
  /** A request whose head passed its checks; `stream.listen` and `stream.resume` take its content. */
  onRequest(stream: ServerStream): void;
  /** A stream onRequest had closed (after its own listener's onClose). */
  onRequestClosed(): void;
  /** The client went over a budget: the session ends with GOAWAY ENHANCE_YOUR_CALM. */
  onFlood(kind: FloodKind): void;
  /** A defect (ours or a listener's) met while serving the client: its session ends with INTERNAL_ERROR. */
  onFailure(error: unknown): void;
  /** The connection is gone; every stream heard onClose first. */
  onClose(error: Error | undefined): void;
}

export interface ServerSessionOptions {
  /** SETTINGS_MAX_CONCURRENT_STREAMS (§6.5.2): a stream past it is refused. */
  readonly maxConcurrentStreams: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE: decoded octets per head, each field counted as name + value + 32. */
  readonly maxHeaderListSize: number;
  /** SETTINGS_INITIAL_WINDOW_SIZE: what one stream's content may hold while nobody reads it. */
  readonly initialStreamWindow: number;
  /** The connection's receive window (at least 65,535). */
  readonly connectionWindow: number;
  /** With no open stream for this long, the session closes with GOAWAY; 0 keeps it. */
  readonly idleTimeoutMs: number;
}

/** The window the budgets count in, and what a client may spend in it (§10.5: each costs us more than it). */
const BUDGET_WINDOW_MS = 10_000;
const BUDGETS: Readonly<Record<FloodKind, number>> = {
  // CVE-2023-44487: each opened stream starts work for us and a backend that its RST_STREAM does not undo.
  rapid_reset: 200,
  ping_flood: 100,
  settings_flood: 50,
  refused_streams: 100,
  stream_errors: 100,
  // Browsers send a few PRIORITY or PRIORITY_UPDATE frames (RFC 9218) per page, never hundreds a second.
  empty_frames: 1_000,
};
/** What else than DATA may wait unsent to a client (HEADERS, RST_STREAM, acknowledgements) before it is cut. */
const UNREAD_BOUND = 4 * 1024 * 1024;
/** How long a socket we ended may take to close before it is destroyed. */
const CLOSE_GRACE_MS = 1000;

/**
 * An HTTP/2 server connection (RFC 9113) on a connected socket, h2c with prior knowledge or TLS with ALPN h2:
 * the client's preface, its requests as ServerStreams (handed out once the read that opened them is handled,
 * so a stream opened and reset in one packet never reaches the user), and budgets that end a client costing
 * far more than it sends.
 */
export class Http2ServerSession extends SessionFrames<ServerStream> implements StreamHost {
  readonly #listener: ServerSessionListener;
  readonly #options: ServerSessionOptions;
  readonly #reader: FrameReader;
  readonly #budgets = new Map<FloodKind, FrameBudget>();
  /** §5.1.1: the highest stream the client opened; a lower idle one is closed. */
  #lastPeerId = 0;
  #prefaceSeen = 0;
  #opened: ServerStream[] = [];
  /** The last-stream-id our GOAWAY carried; §6.8: a later one never raises it. undefined: none sent. */
  #goawayLast: number | undefined;

  constructor(socket: Socket, listener: ServerSessionListener, options: ServerSessionOptions) {
    const connectionWindow = Math.max(options.connectionWindow, DEFAULT_WINDOW);
    const detach = (stream: LinkedStream) => this.#detach(stream);
    const link = new ConnectionLink(socket, options.initialStreamWindow, detach, () => this.settle());
    super(link, options.maxHeaderListSize, connectionWindow);
    this.#listener = listener;
    this.#options = options;
    this.#reader = new FrameReader(DEFAULT_MAX_FRAME_SIZE, this.onFrame, this.#onOversized);
    const settings = [Setting.MAX_CONCURRENT_STREAMS, options.maxConcurrentStreams];
    settings.push(Setting.INITIAL_WINDOW_SIZE, options.initialStreamWindow);
    settings.push(Setting.MAX_HEADER_LIST_SIZE, options.maxHeaderListSize);
    const preface = [settingsFrame(settings)];
    if (connectionWindow > DEFAULT_WINDOW)
      preface.push(windowUpdateFrame(0, connectionWindow - DEFAULT_WINDOW));
    link.write(Buffer.concat(preface));
    socket.setNoDelay(true);
    socket.on("data", this.#onData).on("end", this.onSocketEnd).on("close", this.onSocketEnd);
    socket.on("error", this.onSocketError).on("drain", this.#onDrain);
    if (options.idleTimeoutMs > 0) socket.setTimeout(options.idleTimeoutMs, this.#onIdle);
    socket.resume();
  }

  get socket(): Socket {
    return this.link.socket;
  }

  get destroyed(): boolean {
    return this.isDestroyed;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /** GOAWAY(NO_ERROR) with the last stream opened: no new stream is taken, open ones finish, then it ends. */
  close(): void {
    if (this.isDestroyed || this.#goawayLast !== undefined) return;
    this.#goawayLast = this.#lastPeerId;
    this.link.write(goawayFrame(ErrorCode.NO_ERROR, this.#goawayLast));
    this.settle();
  }

  /**
   * Every open stream is reset with `code` (RST_STREAM, §6.4), then the session ends: when the drain's time is
   * over, or when the client stalled the responses it asked for.
   */
  cut(code: number): void {
    for (const stream of [...this.streams.values()]) stream.reset(code);
    this.close();
    this.destroy(undefined, ErrorCode.NO_ERROR);
  }

  /**
   * Closes everything now: open streams get onClose(code, or CANCEL). With a code, GOAWAY(code) goes (unless
   * close() sent one and the code is NO_ERROR) and the socket ends, destroyed after CLOSE_GRACE_MS; else it is
   * destroyed at once.
   */
  destroy(error?: Error, code?: number): void {
    if (this.isDestroyed) return;
    this.isDestroyed = true;
    const socket = this.link.socket;
    socket.off("data", this.#onData);
    socket.setTimeout(0);
    const streamError = error ?? new Http2SessionError("the HTTP/2 session was destroyed", code, false);
    for (const stream of [...this.streams.values()])
      stream.terminate(code ?? ErrorCode.CANCEL, false, streamError);
    this.#opened = [];
    if (code === undefined) socket.destroy();
    else {
      const sent = this.#goawayLast;
      if (code !== ErrorCode.NO_ERROR || sent === undefined)
        this.link.write(goawayFrame(code, sent ?? this.#lastPeerId));
      this.link.flush();
      socket.end();
      const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
      socket.once("close", () => clearTimeout(timer));
    }
    this.#listener.onClose(error);
  }

  requested(stream: ServerStream): void {
    this.#opened.push(stream);
  }

  cancelled(): void {
    this.#spend("rapid_reset");
  }

  malformed(): void {
    this.#spend("stream_errors");
  }

  /** A session that takes no more streams (GOAWAY either way) ends once its streams have. */
  protected override settle(): void {
    if (this.isDestroyed || this.streams.size > 0) return;
    if (this.#goawayLast !== undefined || this.goneAway) this.destroy(undefined, ErrorCode.NO_ERROR);
  }

  protected override peerReady(): void {}

  /** §5.1.1: a client's streams are odd; one above the last it opened is idle, and even ones are never its. */
  protected override isIdle(id: number): boolean {
    return (id & 1) === 0 || id > this.#lastPeerId;
  }

  protected override openStream(id: number, fields: string[] | null, endStream: boolean): void {
    if ((id & 1) === 0) throw protocolError(`HEADERS on stream ${id}, an even one (RFC 9113 §5.1.1)`);
    this.#lastPeerId = id;
    // §6.8: after our GOAWAY, newer streams are not acted on; §5.1.2: past the limit they are refused.
    const draining = this.#goawayLast !== undefined;
    if (draining || this.streams.size >= this.#options.maxConcurrentStreams) {
      this.link.write(rstStreamFrame(id, ErrorCode.REFUSED_STREAM));
      // A client that had not read our GOAWAY yet is not over any limit.
      if (!draining) this.#spend("refused_streams");
      return;
    }
    const stream = new ServerStream(this.link, id, this);
    this.streams.set(id, stream);
    stream.receiveHeaders(fields, endStream);
  }

  /** The client's GOAWAY: it opens nothing more, and our session ends once its streams have. */
  protected override peerGoaway(): void {
    this.settle();
  }

  /** §6.5.2: 0 or 1 from a client; we never push either way. */
  protected override enablePush(value: number): void {
    if (value > 1) throw protocolError("SETTINGS_ENABLE_PUSH other than 0 or 1 (RFC 9113 §6.5.2)");
  }

  protected override controlFrame(kind: "ping" | "settings" | "empty"): void {
    this.#spend(kind === "ping" ? "ping_flood" : kind === "settings" ? "settings_flood" : "empty_frames");
  }

  #spend(kind: FloodKind): void {
    let budget = this.#budgets.get(kind);
    if (budget === undefined) {
      budget = new FrameBudget(BUDGETS[kind], BUDGET_WINDOW_MS);
      this.#budgets.set(kind, budget);
    }
    if (budget.spend(performance.now()) || this.isDestroyed) return;
    this.#listener.onFlood(kind);
    this.connectionError(ErrorCode.ENHANCE_YOUR_CALM, `over the ${kind} budget`);
  }

  #detach(stream: LinkedStream): void {
    this.link.waiting.delete(stream);
    if (stream.id !== undefined) this.streams.delete(stream.id);
    if ((stream as ServerStream).handedOut) this.#listener.onRequestClosed();
  }

  /**
   * Every way in from the socket or a timer catches what it calls: a defect of ours or of a listener, found
   * while handling a client's frames, ends that client's session (INTERNAL_ERROR), never the process.
   */
  #failed(error: unknown): void {
    this.#listener.onFailure(error);
    try {
      this.connectionError(ErrorCode.INTERNAL_ERROR, "an internal error", error);
    } catch {
      this.link.socket.destroy();
    }
  }

  readonly #onData = (chunk: Buffer): void => {
    try {
      this.#read(chunk);
    } catch (error) {
      this.#failed(error);
    }
  };

  readonly #onDrain = (): void => {
    try {
      this.flushWaiting();
    } catch (error) {
      this.#failed(error);
    }
  };

  #read(chunk: Buffer): void {
    let frames = chunk;
    if (this.#prefaceSeen < CLIENT_PREFACE.length) {
      const take = Math.min(CLIENT_PREFACE.length - this.#prefaceSeen, chunk.length);
      if (
        !chunk.subarray(0, take).equals(CLIENT_PREFACE.subarray(this.#prefaceSeen, this.#prefaceSeen + take))
      ) {
        this.connectionError(ErrorCode.PROTOCOL_ERROR, "no HTTP/2 client preface (RFC 9113 §3.4)");
        return;
      }
      this.#prefaceSeen += take;
      frames = chunk.subarray(take);
    }
    if (frames.length > 0) this.#reader.push(frames);
    // DATA waits for the client's windows and the socket (connection-link.ts); the rest we owe it does not: a
    // client that keeps asking and never reads would grow it without bound.
    if (this.link.socket.writableLength > UNREAD_BOUND) {
      this.connectionError(ErrorCode.ENHANCE_YOUR_CALM, "the client does not read what it asks for");
      return;
    }
    this.#handOut();
  }

  /** The streams the read opened, each unless the same read closed it already. */
  #handOut(): void {
    const opened = this.#opened;
    if (opened.length === 0) return;
    this.#opened = [];
    for (const stream of opened) {
      if (this.isDestroyed) return;
      if (stream.isClosed) continue;
      stream.handedOut = true;
      try {
        this.#listener.onRequest(stream);
      } catch {
        // The user's failure is this stream's, not the session's.
        stream.reset(ErrorCode.INTERNAL_ERROR);
      }
    }
  }

  /**
   * Nothing read or written for the idle time: with no stream open the session closes; with responses waiting
   * on a client that neither reads nor opens its windows (CVE-2019-9517), their streams are cut.
   */
  readonly #onIdle = (): void => {
    try {
      if (this.streams.size === 0) this.close();
      else if (this.link.socket.writableLength > 0 || this.#waitingToSend()) this.cut(ErrorCode.CANCEL);
    } catch (error) {
      this.#failed(error);
    }
  };

  #waitingToSend(): boolean {
    for (const stream of this.streams.values()) if (stream.waitingToSend) return true;
    return false;
  }

  readonly #onOversized = (length: number): void => {
    this.connectionError(
      ErrorCode.FRAME_SIZE_ERROR,
      `a frame of ${length} octets, above 16384 (RFC 9113 §4.2)`,
    );
  };
}
