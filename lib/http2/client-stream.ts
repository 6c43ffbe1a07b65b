import { type ClientStream, Http2StreamError, type StreamListener } from "./api.js";
import type { ConnectionLink } from "./connection-link.js";
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
import { ResponseReceiver } from "./response-receiver.js";

/** Payloads up to this size are copied next to their frame header: one buffer to write instead of two. */
const COPIED_DATA = 1024;
const EMPTY = Buffer.alloc(0);
const NO_FIELDS: readonly string[] = [];
/** One encoder for every session: it keeps nothing between blocks (no dynamic table). */
const encoder = new HpackEncoder();

/**
 * A ClientStream as its session drives it: the request's HEADERS and DATA within the peer's flow-control
 * windows (RFC 9113 §6.9), the response in ResponseReceiver. Its methods past ClientStream's are the session's.
 */
export class Http2Stream extends ResponseReceiver implements ClientStream {
  #fields: readonly string[];
  #refused = false;
  #sendWindow = 0;
  #out: Buffer[] | undefined;
  #outBytes = 0;
  #endRequested: boolean;
  #localEnded = false;
  #needDrain = false;
  /** The last HEADERS or DATA frame written and the link generation it went in: END_STREAM can still go on it. */
  #lastFrame: Buffer | undefined;
  #lastGeneration = -1;

  constructor(link: ConnectionLink, fields: readonly string[], endStream: boolean, listener: StreamListener) {
    // request()'s fields open with :method.
    super(link, listener, fields[1] === "HEAD");
    this.#fields = fields;
    this.#endRequested = endStream;
  }

  get id(): number | undefined {
    return this.streamId;
  }

  write(chunk: Buffer): boolean {
    if (this.#endRequested) throw new Error("write after end() on an HTTP/2 stream");
    if (this.closed || this.#localEnded) return true;
    let rest = chunk;
    if (this.#outBytes === 0 && this.streamId !== undefined) rest = this.#send(chunk);
    if (rest.length > 0) {
      this.#out ??= [];
      this.#out.push(rest);
      this.#outBytes += rest.length;
      if (this.streamId !== undefined) this.link.waiting.add(this);
    }
    if (this.#outBytes === 0) return true;
    this.#needDrain = true;
    return false;
  }

  /** END_STREAM goes on the last frame still corked, else on an empty DATA frame. */
  end(): void {
    if (this.closed || this.#endRequested || this.#localEnded) return;
    this.#endRequested = true;
    if (this.streamId !== undefined && this.#outBytes === 0) this.#sendEnd();
  }

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

  /** HEADERS, then any DATA written while the stream was queued (§5.1.2). */
  start(id: number): void {
    const link = this.link;
    this.openReceiving(id);
    this.#sendWindow = link.peerInitialWindow;
    const end = this.#endRequested && this.#outBytes === 0;
    const frame = headersFrames(id, encoder.encode(this.#fields), end, link.peerMaxFrameSize);
    this.#fields = NO_FIELDS;
    link.write(frame);
    this.#lastFrame = frame;
    this.#lastGeneration = link.generation;
    if (end) this.#localEnded = true;
    else if (this.#outBytes > 0) this.flush();
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
        this.link.waiting.add(this);
        return;
      }
      out.shift();
    }
    if (this.#endRequested && !this.#localEnded) this.#sendEnd();
    if (this.#needDrain && !this.closed) {
      this.#needDrain = false;
      this.listener.onDrain();
    }
  }

  /** §6.9.2: a change of the peer's SETTINGS_INITIAL_WINDOW_SIZE; false when the window would pass 2^31-1. */
  adjustWindow(delta: number): boolean {
    this.#sendWindow += delta;
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

  /** A GOAWAY's last-stream-id is below ours (§6.8): the peer did not and will not act on it. */
  refuse(): void {
    this.#refused = true;
  }

  /**
   * §8.7: REFUSED_STREAM means unprocessed. NO_ERROR after the whole response came only stops our sending
   * (§8.1): the response, maybe still held while paused, completes the stream.
   */
  receiveReset(code: number): void {
    if (code === ErrorCode.NO_ERROR && this.remoteEnded) {
      this.link.waiting.delete(this);
      this.#out = undefined;
      this.#outBytes = 0;
      this.#localEnded = true;
      if (this.remoteDone) this.terminate(ErrorCode.NO_ERROR, false, undefined);
      return;
    }
    const message = `stream ${this.streamId} reset by the peer (code ${code})`;
    const error = new Http2StreamError(message, code, true);
    this.terminate(code, code === ErrorCode.REFUSED_STREAM, error);
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
    this.listener.onClose(code, unprocessed || this.#refused, error);
    this.link.settle();
  }

  /** A stream error (§5.4.2) in what the peer sent on this open stream. */
  protected override fail(code: number, message: string): void {
    const id = this.streamId as number;
    this.link.write(rstStreamFrame(id, code));
    this.terminate(code, false, new Http2StreamError(`stream ${id}: ${message}`, code, false));
  }

  protected override remoteFinished(): void {
    if (this.#localEnded) this.terminate(ErrorCode.NO_ERROR, false, undefined);
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
    const last = this.#lastFrame;
    if (last !== undefined && link.corked && this.#lastGeneration === link.generation)
      last[4] = (last[4] as number) | Flag.END_STREAM;
    else link.write(dataFrame(this.streamId as number, EMPTY, true));
    this.#localEnded = true;
    this.#lastFrame = undefined;
    if (this.remoteDone) this.terminate(ErrorCode.NO_ERROR, false, undefined);
  }
}
