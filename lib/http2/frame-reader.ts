import { FRAME_HEADER_LENGTH, frameLengthAt, MAX_STREAM_ID } from "./frames.js";

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
      const length = frameLengthAt(chunk, offset);
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
    if (rest >= FRAME_HEADER_LENGTH) size += frameLengthAt(chunk, offset);
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
      const length = frameLengthAt(partial, 0);
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
