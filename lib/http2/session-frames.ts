import { type BodyListener, connectionError, Http2SessionError, protocolError } from "./api.js";
import type { ConnectionLink } from "./connection-link.js";
import { FieldBlock } from "./field-block.js";
import {
  DEFAULT_MAX_FRAME_SIZE,
  ErrorCode,
  Flag,
  FrameType,
  MAX_FRAME_SIZE_LIMIT,
  MAX_STREAM_ID,
  MAX_WINDOW,
  pingAckFrame,
  SETTINGS_ACK,
  Setting,
  unpadded,
  windowUpdateFrame,
} from "./frames.js";
import { HpackDecoder } from "./hpack.js";
import type { Http2StreamBase } from "./stream-base.js";

/** Control frames we owe (PING and SETTINGS acknowledgements) may wait this much unsent; past it the peer is not reading. */
const CONTROL_BACKLOG = 4 * 1024 * 1024;

/**
 * The frames a session receives, each handled by RFC 9113 §6, for either role: what differs is which stream
 * identifiers are the peer's to open, and what a peer's HEADERS on a new one or its GOAWAY mean
 * (client-session.ts and server-session.ts, which have the public APIs).
 */
export abstract class SessionFrames<Stream extends Http2StreamBase<BodyListener>> {
  protected readonly streams = new Map<number, Stream>();
  protected isReady = false;
  protected isDestroyed = false;
  protected goneAway = false;
  protected peerMaxStreams: number | undefined;
  /** §4.3, §6.10: the field block under assembly, if any. */
  readonly #block: FieldBlock;
  /** The connection's one decoder: every block is decoded, even for a stream we closed (RFC 9113 §4.3). */
  readonly #decoder: HpackDecoder;
  readonly #connectionWindow: number;
  #receiveWindow: number;
  #unacknowledged = 0;

  protected constructor(
    protected readonly link: ConnectionLink,
    maxHeaderListSize: number,
    connectionWindow: number,
  ) {
    this.#block = new FieldBlock(maxHeaderListSize * 2);
    this.#decoder = new HpackDecoder(4096, maxHeaderListSize);
    this.#connectionWindow = connectionWindow;
    this.#receiveWindow = connectionWindow;
  }

  #socketError: Error | undefined;

  /** Closes everything now: every stream hears onClose; with a code, GOAWAY(code) goes before the socket ends. */
  abstract destroy(error?: Error, code?: number): void;

  /** GOAWAY(code), then every stream closes and the socket goes (§5.4.1). */
  protected connectionError(code: number, message: string, cause?: unknown): void {
    this.destroy(new Http2SessionError(message, code, false, { cause }), code);
  }

  protected readonly onSocketError = (error: Error): void => {
    this.#socketError ??= error;
  };

  /** The socket ended or closed under the session: the peer left, or the connection failed. */
  protected readonly onSocketEnd = (): void => {
    if (this.isDestroyed) return;
    const cause = this.#socketError;
    const message =
      cause === undefined ? "the peer closed the connection" : `the connection failed: ${cause.message}`;
    this.destroy(new Http2SessionError(message, undefined, true, { cause }));
  };

  /** Streams may have closed or the peer's limits changed: queued streams may go, an idle closing session ends. */
  protected abstract settle(): void;

  /** The peer's first SETTINGS arrived and was acknowledged. */
  protected abstract peerReady(): void;

  /** A stream identifier the peer could not have used yet (§5.1: idle), or one that is never its to use. */
  protected abstract isIdle(id: number): boolean;

  /** A complete field block on an idle stream: the peer opens it, if it is the peer's to open. */
  protected abstract openStream(id: number, fields: string[] | null, endStream: boolean): void;

  /** The peer's GOAWAY (§6.8). */
  protected abstract peerGoaway(lastStreamId: number, code: number): void;

  /** §6.5.2: SETTINGS_ENABLE_PUSH as the peer sent it; what is allowed depends on who sent it. */
  protected abstract enablePush(value: number): void;

  /**
   * A frame that costs us work and tells us nothing new: a PING or SETTINGS that asks for an acknowledgement, or
   * an "empty" one (DATA with no payload nor END_STREAM, PRIORITY, an unknown type). The server counts them
   * (§10.5; CVE-2019-9518 for empty frames).
   */
  protected controlFrame(_kind: "ping" | "settings" | "empty"): void {}

  protected readonly onFrame = (type: number, flags: number, streamId: number, payload: Buffer): boolean => {
    try {
      if (this.#block.streamId !== 0) this.#continuation(type, flags, streamId, payload);
      else if (this.isReady || type === FrameType.SETTINGS) this.#dispatch(type, flags, streamId, payload);
      else throw protocolError("the peer's first frame is not SETTINGS (RFC 9113 §3.4)");
    } catch (error) {
      if (!(error instanceof Http2SessionError) || error.code === undefined) throw error;
      this.connectionError(error.code, error.message, error.cause);
    }
    return !this.isDestroyed;
  };

  protected readonly flushWaiting = (): void => {
    const waiting = this.link.waiting;
    if (waiting.size === 0) return;
    const streams = [...waiting];
    waiting.clear();
    for (const stream of streams) {
      if (this.isDestroyed) return;
      stream.flush();
    }
  };

  /** §5.5: PRIORITY (deprecated, §5.3.2) and unknown frame types are ignored. */
  #dispatch(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (type === FrameType.DATA) this.#data(flags, streamId, payload);
    else if (type === FrameType.HEADERS) this.#headers(flags, streamId, payload);
    else if (type === FrameType.RST_STREAM) this.#reset(streamId, payload);
    else if (type === FrameType.SETTINGS) this.#settings(flags, streamId, payload);
    else if (type === FrameType.PING) this.#ping(flags, streamId, payload);
    else if (type === FrameType.GOAWAY) this.#goaway(streamId, payload);
    else if (type === FrameType.WINDOW_UPDATE) this.#windowUpdate(streamId, payload);
    else if (type === FrameType.PUSH_PROMISE)
      throw protocolError("PUSH_PROMISE with push disabled (RFC 9113 §8.4)");
    else if (type === FrameType.CONTINUATION)
      throw protocolError("CONTINUATION without HEADERS (RFC 9113 §6.10)");
    else this.controlFrame("empty");
  }

  #data(flags: number, streamId: number, payload: Buffer): void {
    // §6.9.1: the whole frame counts against the connection window, whatever becomes of it.
    this.#receiveWindow -= payload.length;
    if (this.#receiveWindow < 0)
      throw connectionError(ErrorCode.FLOW_CONTROL_ERROR, "DATA beyond the connection window");
    this.#unacknowledged += payload.length;
    if (this.#unacknowledged >= this.#connectionWindow >>> 1) {
      this.link.write(windowUpdateFrame(0, this.#unacknowledged));
      this.#receiveWindow += this.#unacknowledged;
      this.#unacknowledged = 0;
    }
    const endStream = (flags & Flag.END_STREAM) !== 0;
    if (payload.length === 0 && !endStream) this.controlFrame("empty");
    if (this.isDestroyed) return;
    const data = unpadded(flags, payload, false);
    this.#stream(streamId, "DATA")?.receiveData(data, payload.length, endStream);
  }

  #headers(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) throw protocolError("HEADERS on stream 0 (RFC 9113 §6.2)");
    const fragment = unpadded(flags, payload, true);
    const endStream = (flags & Flag.END_STREAM) !== 0;
    if ((flags & Flag.END_HEADERS) !== 0) this.#fieldBlock(streamId, endStream, fragment);
    else this.#block.open(streamId, endStream, fragment);
  }

  #continuation(type: number, flags: number, streamId: number, fragment: Buffer): void {
    const endStream = this.#block.endStream;
    const block = this.#block.add(type, flags, streamId, fragment);
    if (block !== undefined) this.#fieldBlock(streamId, endStream, block);
  }

  #fieldBlock(streamId: number, endStream: boolean, block: Buffer): void {
    const decoder = this.#decoder;
    const decoded = decoder.decode(block);
    const fields = decoder.oversized ? null : decoded;
    const stream = this.streams.get(streamId);
    if (stream !== undefined) stream.receiveHeaders(fields, endStream);
    else if (this.isIdle(streamId)) this.openStream(streamId, fields, endStream);
  }

  #reset(streamId: number, payload: Buffer): void {
    if (payload.length !== 4)
      throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "RST_STREAM not 4 octets long");
    this.#stream(streamId, "RST_STREAM")?.receiveReset(payload.readUInt32BE(0));
  }

  #settings(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) throw protocolError("SETTINGS on a stream (RFC 9113 §6.5)");
    const ack = (flags & Flag.ACK) !== 0;
    if (ack ? payload.length !== 0 : payload.length % 6 !== 0) {
      throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "SETTINGS of a wrong length (RFC 9113 §6.5)");
    }
    if (ack) return;
    this.controlFrame("settings");
    for (let at = 0; at < payload.length; at += 6)
      this.#setting(payload.readUInt16BE(at), payload.readUInt32BE(at + 2));
    this.link.write(SETTINGS_ACK);
    this.#checkBacklog();
    this.flushWaiting();
    if (this.isDestroyed) return;
    const first = !this.isReady;
    this.isReady = true;
    this.settle();
    if (first && !this.isDestroyed) this.peerReady();
  }

  /** §6.5.2; the peer's SETTINGS_HEADER_TABLE_SIZE does not matter, as our encoder keeps no table. */
  #setting(id: number, value: number): void {
    if (id === Setting.ENABLE_PUSH) this.enablePush(value);
    else if (id === Setting.MAX_CONCURRENT_STREAMS) this.peerMaxStreams = value;
    else if (id === Setting.INITIAL_WINDOW_SIZE) this.#initialWindow(value);
    else if (id === Setting.MAX_FRAME_SIZE) {
      if (value < DEFAULT_MAX_FRAME_SIZE || value > MAX_FRAME_SIZE_LIMIT)
        throw protocolError("SETTINGS_MAX_FRAME_SIZE out of range (RFC 9113 §6.5.2)");
      this.link.peerMaxFrameSize = value;
    }
  }

  /** §6.9.2: the change applies to every open stream's send window as a delta, which may leave it negative. */
  #initialWindow(value: number): void {
    if (value > MAX_WINDOW)
      throw connectionError(ErrorCode.FLOW_CONTROL_ERROR, "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1");
    const delta = value - this.link.peerInitialWindow;
    this.link.peerInitialWindow = value;
    for (const stream of this.streams.values()) {
      if (!stream.adjustWindow(delta)) {
        throw connectionError(ErrorCode.FLOW_CONTROL_ERROR, "a stream window above 2^31-1 (RFC 9113 §6.9.2)");
      }
    }
  }

  #ping(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) throw protocolError("PING on a stream (RFC 9113 §6.7)");
    if (payload.length !== 8) throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "PING not 8 octets long");
    if ((flags & Flag.ACK) !== 0) return;
    this.controlFrame("ping");
    if (this.isDestroyed) return;
    this.link.write(pingAckFrame(payload));
    this.#checkBacklog();
  }

  /** §6.8: what the last-stream-id means is the role's to say. */
  #goaway(streamId: number, payload: Buffer): void {
    if (streamId !== 0) throw protocolError("GOAWAY on a stream (RFC 9113 §6.8)");
    if (payload.length < 8) throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "GOAWAY shorter than 8 octets");
    this.goneAway = true;
    this.peerGoaway(payload.readUInt32BE(0) & MAX_STREAM_ID, payload.readUInt32BE(4));
  }

  #windowUpdate(streamId: number, payload: Buffer): void {
    if (payload.length !== 4)
      throw connectionError(ErrorCode.FRAME_SIZE_ERROR, "WINDOW_UPDATE not 4 octets long");
    const increment = payload.readUInt32BE(0) & MAX_WINDOW;
    if (streamId !== 0) {
      this.#stream(streamId, "WINDOW_UPDATE")?.windowUpdate(increment);
      return;
    }
    if (increment === 0) throw protocolError("connection WINDOW_UPDATE of 0 (RFC 9113 §6.9)");
    if (this.link.sendWindow + increment > MAX_WINDOW)
      throw connectionError(
        ErrorCode.FLOW_CONTROL_ERROR,
        "connection send window above 2^31-1 (RFC 9113 §6.9.1)",
      );
    this.link.sendWindow += increment;
    this.flushWaiting();
  }

  /**
   * The open stream a frame is for; undefined for one that closed, whose frames are ignored (§5.1). On stream 0
   * or an idle one, it is a connection error (§5.1, §6.1-§6.4).
   */
  #stream(id: number, frame: string): Stream | undefined {
    const stream = this.streams.get(id);
    if (stream === undefined && (id === 0 || this.isIdle(id)))
      throw protocolError(`${frame} on stream ${id}, which is not open (RFC 9113 §5.1)`);
    return stream;
  }

  #checkBacklog(): void {
    if (this.link.socket.writableLength > CONTROL_BACKLOG)
      throw connectionError(
        ErrorCode.ENHANCE_YOUR_CALM,
        "the peer does not read the acknowledgements it asks for",
      );
  }
}
