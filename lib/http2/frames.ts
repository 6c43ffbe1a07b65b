import { protocolError } from "./api.js";

/** HTTP/2 framing (RFC 9113 §4, §6): constants, the frames the client sends, and the reader of the peer's. */

export const FRAME_HEADER_LENGTH = 9;

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;

export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const;

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** §3.4: what a client sends first, before its SETTINGS. */
export const CLIENT_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** §6.5.2, §6.9.2: windows start at 65,535 octets, frames at most 16,384 octets until SETTINGS say otherwise. */
export const DEFAULT_WINDOW = 65_535;
export const DEFAULT_MAX_FRAME_SIZE = 16_384;
export const MAX_FRAME_SIZE_LIMIT = 0xff_ffff;
/** §6.9.1: a flow-control window never exceeds 2^31-1; §5.1.1: nor does a stream identifier. */
export const MAX_WINDOW = 0x7fff_ffff;
export const MAX_STREAM_ID = 0x7fff_ffff;

/** §4.1: length (24 bits), type, flags, a reserved bit and the stream identifier (31 bits). */
export function writeFrameHeader(
  target: Buffer,
  offset: number,
  length: number,
  type: number,
  flags: number,
  streamId: number,
): void {
  target.writeUIntBE(length, offset, 3);
  target[offset + 3] = type;
  target[offset + 4] = flags;
  target.writeUInt32BE(streamId & MAX_STREAM_ID, offset + 5);
}

function frame(type: number, flags: number, streamId: number, payloadLength: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + payloadLength);
  writeFrameHeader(out, 0, payloadLength, type, flags, streamId);
  return out;
}

/** settings: [identifier, value, identifier, value, ...] (§6.5.1). */
export function settingsFrame(settings: readonly number[]): Buffer {
  const out = frame(FrameType.SETTINGS, 0, 0, settings.length * 3);
  for (let i = 0; i + 1 < settings.length; i += 2) {
    out.writeUInt16BE(settings[i] as number, FRAME_HEADER_LENGTH + i * 3);
    out.writeUInt32BE(settings[i + 1] as number, FRAME_HEADER_LENGTH + i * 3 + 2);
  }
  return out;
}

/** Never changed once built, so one serves every acknowledgement. */
export const SETTINGS_ACK = frame(FrameType.SETTINGS, Flag.ACK, 0, 0);

/** §6.7: the ACK carries the PING's own 8 octets. */
export function pingAckFrame(payload: Buffer): Buffer {
  const out = frame(FrameType.PING, Flag.ACK, 0, 8);
  payload.copy(out, FRAME_HEADER_LENGTH, 0, 8);
  return out;
}

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  return wordFrame(FrameType.WINDOW_UPDATE, streamId, increment & MAX_WINDOW);
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  return wordFrame(FrameType.RST_STREAM, streamId, code);
}

/** A frame whose payload is one 32-bit value. */
function wordFrame(type: number, streamId: number, value: number): Buffer {
  const out = frame(type, 0, streamId, 4);
  out.writeUInt32BE(value >>> 0, FRAME_HEADER_LENGTH);
  return out;
}

/** §6.8: the last stream the sender acted on or may act on; a client accepts none from a server, so 0. */
export function goawayFrame(code: number, lastStreamId = 0): Buffer {
  const out = frame(FrameType.GOAWAY, 0, 0, 8);
  out.writeUInt32BE(lastStreamId, FRAME_HEADER_LENGTH);
  out.writeUInt32BE(code >>> 0, FRAME_HEADER_LENGTH + 4);
  return out;
}

/**
 * One header block as HEADERS followed by as many CONTINUATION frames as the peer's SETTINGS_MAX_FRAME_SIZE
 * requires (§6.2, §6.10), in one buffer. END_STREAM goes on the HEADERS frame, END_HEADERS on the last frame.
 */
export function headersFrames(
  streamId: number,
  block: Buffer,
  endStream: boolean,
  maxFrameSize: number,
): Buffer {
  const frames = Math.max(1, Math.ceil(block.length / maxFrameSize));
  const out = Buffer.allocUnsafe(block.length + frames * FRAME_HEADER_LENGTH);
  let at = 0;
  for (let i = 0; i < frames; i++) {
    const start = i * maxFrameSize;
    const length = Math.min(maxFrameSize, block.length - start);
    const type = i === 0 ? FrameType.HEADERS : FrameType.CONTINUATION;
    let flags = i === frames - 1 ? Flag.END_HEADERS : 0;
    if (i === 0 && endStream) flags |= Flag.END_STREAM;
    writeFrameHeader(out, at, length, type, flags, streamId);
    block.copy(out, at + FRAME_HEADER_LENGTH, start, start + length);
    at += FRAME_HEADER_LENGTH + length;
  }
  return out;
}

/** A DATA frame, its payload copied in unless `copied` is false (then the payload is written after it as it is). */
export function dataFrame(streamId: number, payload: Buffer, endStream: boolean, copied = true): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + (copied ? payload.length : 0));
  writeFrameHeader(out, 0, payload.length, FrameType.DATA, endStream ? Flag.END_STREAM : 0, streamId);
  if (copied) payload.copy(out, FRAME_HEADER_LENGTH);
  return out;
}

/** §6.1, §6.2: the payload without padding (and HEADERS' priority fields); PROTOCOL_ERROR when the padding does not fit. */
export function unpadded(flags: number, payload: Buffer, headers: boolean): Buffer {
  let start = 0;
  let end = payload.length;
  if ((flags & Flag.PADDED) !== 0) {
    start = 1;
    end -= payload.length > 0 ? (payload[0] as number) : end + 1;
  }
  if (headers && (flags & Flag.PRIORITY) !== 0) start += 5;
  if (start > end) throw protocolError("padding or priority longer than the frame (RFC 9113 §6.1)");
  return start === 0 && end === payload.length ? payload : payload.subarray(start, end);
}

/** Called per complete frame; false stops reading (the session is gone). */
export type FrameHandler = (type: number, flags: number, streamId: number, payload: Buffer) => boolean;

/**
 * Splits the socket's chunks into frames. Frames inside one chunk are handed out as views of it; a frame split
 * across chunks is assembled in a buffer of its own size, so each octet is copied at most once however the peer
 * slices its writes. A frame longer than `maxFrameSize` (our SETTINGS_MAX_FRAME_SIZE) stops reading (§4.2).
 */
export class FrameReader {
  readonly #maxFrameSize: number;
  readonly #onFrame: FrameHandler;
  readonly #onOversized: (length: number) => void;
  #partial: Buffer | undefined;
  #filled = 0;
  #stopped = false;

  constructor(maxFrameSize: number, onFrame: FrameHandler, onOversized: (length: number) => void) {
    this.#maxFrameSize = maxFrameSize;
    this.#onFrame = onFrame;
    this.#onOversized = onOversized;
  }

  push(chunk: Buffer): void {
    if (this.#stopped) return;
    let offset = this.#partial === undefined ? 0 : this.#complete(chunk);
    if (offset < 0) return;
    const end = chunk.length;
    while (end - offset >= FRAME_HEADER_LENGTH) {
      const length = chunk.readUIntBE(offset, 3);
      if (length > this.#maxFrameSize) {
        this.#oversized(length);
        return;
      }
      const next = offset + FRAME_HEADER_LENGTH + length;
      if (next > end) break;
      const type = chunk[offset + 3] as number;
      const flags = chunk[offset + 4] as number;
      const streamId = chunk.readUInt32BE(offset + 5) & MAX_STREAM_ID;
      if (!this.#onFrame(type, flags, streamId, chunk.subarray(offset + FRAME_HEADER_LENGTH, next))) {
        this.#stop();
        return;
      }
      offset = next;
    }
    if (offset < end) this.#keep(chunk, offset);
  }

  #keep(chunk: Buffer, offset: number): void {
    const rest = chunk.length - offset;
    let size = FRAME_HEADER_LENGTH;
    if (rest >= FRAME_HEADER_LENGTH) size += chunk.readUIntBE(offset, 3);
    this.#partial = Buffer.allocUnsafe(size);
    chunk.copy(this.#partial, 0, offset);
    this.#filled = rest;
  }

  /** Fills the frame under assembly from `chunk`: the offset after it, or -1 when the chunk ran out or reading stopped. */
  #complete(chunk: Buffer): number {
    let used = 0;
    for (;;) {
      let partial = this.#partial as Buffer;
      const take = Math.min(partial.length - this.#filled, chunk.length - used);
      chunk.copy(partial, this.#filled, used, used + take);
      this.#filled += take;
      used += take;
      if (this.#filled < partial.length) return -1;
      const length = partial.readUIntBE(0, 3);
      if (length > this.#maxFrameSize) {
        this.#oversized(length);
        return -1;
      }
      if (partial.length < FRAME_HEADER_LENGTH + length) {
        partial = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + length);
        (this.#partial as Buffer).copy(partial, 0, 0, FRAME_HEADER_LENGTH);
        this.#partial = partial;
        continue;
      }
      this.#partial = undefined;
      this.#filled = 0;
      const streamId = partial.readUInt32BE(5) & MAX_STREAM_ID;
      const payload = partial.subarray(FRAME_HEADER_LENGTH);
      if (!this.#onFrame(partial[3] as number, partial[4] as number, streamId, payload)) {
        this.#stop();
        return -1;
      }
      return used;
    }
  }

  #oversized(length: number): void {
    this.#stop();
    this.#onOversized(length);
  }

  #stop(): void {
    this.#stopped = true;
    this.#partial = undefined;
    this.#filled = 0;
  }
}
