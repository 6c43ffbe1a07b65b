import { type BodyListener, Http2StreamError } from "./api.js";
import {
  DEFAULT_MAX_FRAME_SIZE,
  dataFrame,
  ErrorCode,
  Flag,
  headersFrames,
  MAX_WINDOW,
  rstStreamFrame,
} from "./frames.js";
import { HpackEncoder } from "./hpack.js";
import { MessageReceiver } from "./message-receiver.js";

/** Payloads up to this size are copied next to their frame header: one buffer to write instead of two. */
const COPIED_DATA = 1024;
const EMPTY = Buffer.alloc(0);
/** One encoder for every session: it keeps nothing between blocks (no dynamic table). */
const encoder = new HpackEncoder();

/**
 * A stream of either role as its session drives it: our head, DATA within the peer's flow-control windows
 * (RFC 9113 §6.9) and our end (END_STREAM, or trailers); the peer's message in MessageReceiver. The client's
 * request (client-stream.ts) and the server's response (server-stream.ts) differ only in their heads.
 */
export abstract class Http2StreamBase<Listener extends BodyListener> extends MessageReceiver<Listener> {
  /** end() was called: END_STREAM (or the trailers) goes once what was written has gone. */
  protected endRequested = false;
  /** Our END_STREAM went. */
  protected localEnded = false;
  #headSent = false;
  #sendWindow = 0;
  #out: Buffer[] | undefined;
  #outBytes = 0;
  #needDrain = false;
  #trailers: readonly string[] | undefined;
  /** The last HEADERS or DATA frame written and the link generation it went in: END_STREAM can still go on it. */
  #lastFrame: Buffer | undefined;
  #lastGeneration = -1;

  get id(): number | undefined {
    return this.streamId;
  }

  /** DATA written and not sent yet: it waits for a window or for the socket. */
  get waitingToSend(): boolean {
    return this.#outBytes > 0;
  }

  /** Sends a DATA chunk within the flow-control windows; false when some waits (onDrain follows). */
  write(chunk: Buffer): boolean {
    if (this.endRequested) throw new Error("write after end() on an HTTP/2 stream");
    if (this.closed || this.localEnded) return true;
    let rest = chunk;
    if (this.#outBytes === 0 && this.#headSent) rest = this.#send(chunk);
    if (rest.length > 0) {
      this.#out ??= [];
      this.#out.push(rest);
      this.#outBytes += rest.length;
      if (this.#headSent) this.#wait();
    }
    if (this.#outBytes === 0) return true;
    this.#needDrain = true;
    return false;
  }

  /**
   * Our end after what was written: END_STREAM on the last frame still corked, else on an empty DATA frame, or
   * `trailers` (a flat list) as a last HEADERS frame (§8.1).
   */
  end(trailers?: readonly string[]): void {
    if (this.closed || this.endRequested || this.localEnded) return;
    this.endRequested = true;
    this.#trailers = trailers;
    if (this.#headSent && this.#outBytes === 0) this.#sendEnd();
  }

  /** RST_STREAM(code) unless closed (§6.4); onClose follows, unprocessed if the stream was never sent. */
  reset(code: number): void {
    if (this.closed) return;
    const id = this.streamId;
    if (id === undefined) {
      this.terminate(code, true, new Http2StreamError("stream reset before it was sent", code, false));
      return;
    }
    this.link.write(rstStreamFrame(id, code));
    this.terminate(code, false, new Http2StreamError(`stream ${id} reset (code ${code})`, code, false));
  }

  /**
   * Sends what this tick wrote now (one writev still); true when some of it is still held, waiting for a window
   * or in the socket, so a payload written as a view of a buffer its writer reuses must not be overwritten yet.
   */
  holdsWrites(): boolean {
    this.link.flush();
    return this.#outBytes > 0 || this.link.socket.writableLength > 0;
  }

  /** Sends the queued DATA the windows and the socket allow. */
  flush(): void {
    const out = this.#out;
    // Nothing queued, or the stream closed (a listener may close another stream while the session flushes).
    if (out === undefined) return;
    while (out.length > 0) {
      const chunk = out[0] as Buffer;
      const rest = this.#send(chunk);
      this.#outBytes -= chunk.length - rest.length;
      if (rest.length > 0) {
        out[0] = rest;
        this.#wait();
        return;
      }
      out.shift();
    }
    if (this.endRequested && !this.localEnded) this.#sendEnd();
    if (this.#needDrain && !this.closed) {
      this.#needDrain = false;
      this.listener.onDrain();
    }
  }

  /** §6.9.2: a change of the peer's SETTINGS_INITIAL_WINDOW_SIZE; false when the window would pass 2^31-1. */
  adjustWindow(delta: number): boolean {
    this.#sendWindow += delta;
    if (this.#outBytes > 0) this.#wait();
    return this.#sendWindow <= MAX_WINDOW;
  }

  windowUpdate(increment: number): void {
    if (increment === 0) {
      this.fail(ErrorCode.PROTOCOL_ERROR, "WINDOW_UPDATE of 0 (RFC 9113 §6.9)");
    } else if (this.#sendWindow + increment > MAX_WINDOW) {
      this.fail(ErrorCode.FLOW_CONTROL_ERROR, "send window above 2^31-1 (RFC 9113 §6.9.1)");
    } else {
      this.#sendWindow += increment;
      if (this.#outBytes > 0) this.flush();
    }
  }

  /** The peer's RST_STREAM (§6.4); REFUSED_STREAM means it did not act on the stream (§8.7). */
  receiveReset(code: number): void {
    const message = `stream ${this.streamId} reset by the peer (code ${code})`;
    this.terminate(code, code === ErrorCode.REFUSED_STREAM, new Http2StreamError(message, code, true));
  }

  /** Closes the stream, sending nothing: it leaves the session, then its listener hears onClose. */
  terminate(code: number, unprocessed: boolean, error: Error | undefined): void {
    if (this.closed) return;
    this.closed = true;
    this.#out = undefined;
    this.#outBytes = 0;
    this.#lastFrame = undefined;
    this.dropReceived();
    this.link.detach(this);
    this.listener.onClose(code, unprocessed, error);
    this.link.settle();
  }

  /** The stream has its identifier: the receive window is ours to grant, the send window the peer's setting. */
  protected open(id: number): void {
    this.openReceiving(id);
    this.#sendWindow = this.link.peerInitialWindow;
  }

  /**
   * Our head (pseudo-header fields first), with END_STREAM when end() came and nothing was written; DATA
   * written before it follows. An informational head (§8.1) neither ends the stream nor takes END_STREAM later.
   */
  protected sendHead(fields: readonly string[], informational = false): void {
    const link = this.link;
    const end = !informational && this.endRequested && this.#outBytes === 0 && this.#trailers === undefined;
    const frame = headersFrames(this.streamId as number, encoder.encode(fields), end, link.peerMaxFrameSize);
    link.write(frame);
    if (informational) return;
    this.#headSent = true;
    this.#lastFrame = frame;
    this.#lastGeneration = link.generation;
    if (end) this.#ended();
    else if (this.#outBytes > 0) this.flush();
    else if (this.endRequested) this.#sendEnd();
  }

  protected get headSent(): boolean {
    return this.#headSent;
  }

  /** Stops our sending: what is queued is dropped and no END_STREAM goes (the peer said it needs none, §8.1). */
  protected dropSending(): void {
    this.link.waiting.delete(this);
    this.#out = undefined;
    this.#outBytes = 0;
    this.localEnded = true;
  }

  /** A stream error (§5.4.2) in what the peer sent on this open stream. */
  protected override fail(code: number, message: string): void {
    const id = this.streamId as number;
    this.link.write(rstStreamFrame(id, code));
    this.terminate(code, false, new Http2StreamError(`stream ${id}: ${message}`, code, false));
  }

  protected override remoteFinished(): void {
    if (this.localEnded) this.terminate(ErrorCode.NO_ERROR, false, undefined);
  }

  /**
   * Writes what fits of `chunk` as DATA frames; returns what is left. Frames stay at 16 KiB whatever the peer
   * allows (§4.2): the socket then holds at most one frame past SEND_BACKLOG, and its backlog beyond that
   * measures control frames the peer does not read (session-frames.ts CONTROL_BACKLOG).
   */
  #send(chunk: Buffer): Buffer {
    const link = this.link;
    let rest = chunk;
    while (rest.length > 0) {
      const room = Math.min(this.#sendWindow, link.sendWindow, DEFAULT_MAX_FRAME_SIZE);
      if (room <= 0 || link.backlogged) break;
      const size = Math.min(room, rest.length);
      this.#writeData(size === rest.length ? rest : rest.subarray(0, size));
      this.#sendWindow -= size;
      link.sendWindow -= size;
      rest = size === rest.length ? EMPTY : rest.subarray(size);
    }
    return rest;
  }

  /**
   * What is left waits for the session: on the connection window or the socket, in the link's set; on this
   * stream's own window, for its WINDOW_UPDATE alone. A connection WINDOW_UPDATE then touches only the streams
   * it can move, so a flood of them costs no more per frame with many streams stalled on their own windows.
   */
  #wait(): void {
    if (this.#sendWindow > 0) this.link.waiting.add(this);
  }

  #writeData(payload: Buffer): void {
    const link = this.link;
    const id = this.streamId as number;
    const small = payload.length <= COPIED_DATA;
    const frame = dataFrame(id, payload, false, small);
    link.write(frame);
    if (!small) link.write(payload);
    this.#lastFrame = frame;
    this.#lastGeneration = link.generation;
  }

  /** A frame of ours still corked in this tick takes END_STREAM itself: no empty DATA frame after it. */
  #sendEnd(): void {
    const link = this.link;
    const id = this.streamId as number;
    const last = this.#lastFrame;
    const trailers = this.#trailers;
    if (trailers !== undefined) {
      link.write(headersFrames(id, encoder.encode(trailers), true, link.peerMaxFrameSize));
    } else if (last !== undefined && link.corked && this.#lastGeneration === link.generation) {
      last[4] = (last[4] as number) | Flag.END_STREAM;
    } else link.write(dataFrame(id, EMPTY, true));
    this.#ended();
  }

  #ended(): void {
    this.localEnded = true;
    this.#lastFrame = undefined;
    this.#trailers = undefined;
    this.localFinished();
  }

  /** Our END_STREAM went: the stream is complete once the peer's message was delivered too. */
  protected localFinished(): void {
    if (this.remoteDone) this.terminate(ErrorCode.NO_ERROR, false, undefined);
  }
}
