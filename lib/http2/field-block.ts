import { connectionError, protocolError } from "./api.js";
import { ErrorCode, Flag, FRAME_HEADER_LENGTH, FrameType } from "./frames.js";

/**
 * A field block that spans HEADERS and CONTINUATION frames (RFC 9113 §4.3, §6.10), assembled until its last
 * frame. Bounded on the wire, each frame's header included: a CONTINUATION flood (of empty frames too) costs the
 * peer its connection, not our memory.
 */
export class FieldBlock {
  /** The stream whose block is under assembly; 0 when none is. */
  streamId = 0;
  endStream = false;
  #parts: Buffer[] = [];
  #size = 0;

  constructor(readonly maxSize: number) {}

  /** A HEADERS frame without END_HEADERS opens a block. */
  open(streamId: number, endStream: boolean, fragment: Buffer): void {
    this.streamId = streamId;
    this.endStream = endStream;
    this.add(FrameType.CONTINUATION, 0, streamId, fragment);
  }

  /** §6.10: only CONTINUATION frames of its stream come between; the whole block once END_HEADERS came. */
  add(type: number, flags: number, streamId: number, fragment: Buffer): Buffer | undefined {
    if (type !== FrameType.CONTINUATION || streamId !== this.streamId)
      throw protocolError("a field block interrupted by another frame (RFC 9113 §6.10)");
    this.#size += FRAME_HEADER_LENGTH + fragment.length;
    if (this.#size > this.maxSize) {
      const message = "a field block larger than twice our SETTINGS_MAX_HEADER_LIST_SIZE";
      throw connectionError(ErrorCode.ENHANCE_YOUR_CALM, message);
    }
    if (fragment.length > 0) this.#parts.push(Buffer.from(fragment));
    if ((flags & Flag.END_HEADERS) === 0) return undefined;
    const block = Buffer.concat(this.#parts);
    this.streamId = 0;
    this.#parts = [];
    this.#size = 0;
    return block;
  }
}
