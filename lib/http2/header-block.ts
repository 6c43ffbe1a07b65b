import { Http2SessionError, protocolError } from "./api.js";
import { ErrorCode, Flag, FRAME_HEADER_LENGTH, FrameType } from "./frames.js";

/**
 * HEADERS and its CONTINUATION frames joined into one field block (RFC 9113 §4.3, §6.10). The block's size on
 * the wire is bounded, so a CONTINUATION flood costs the peer its connection, not our memory. Throws
 * Http2SessionError, a connection error.
 */
export class HeaderBlockAssembler {
  readonly #maxBlockSize: number;
  /** The stream of the block under assembly; 0 when none. */
  #streamId = 0;
  #endStream = false;
  #parts: Buffer[] = [];
  #size = 0;

  constructor(maxBlockSize: number) {
    this.#maxBlockSize = maxBlockSize;
  }

  /** CONTINUATION must come next (§6.10): nothing else may interleave. */
  get open(): boolean {
    return this.#streamId !== 0;
  }

  get endStream(): boolean {
    return this.#endStream;
  }

  /** A HEADERS fragment (padding and priority removed): the whole block once it ends, else undefined. */
  headers(streamId: number, flags: number, fragment: Buffer): Buffer | undefined {
    if (fragment.length > this.#maxBlockSize) throw tooLarge();
    if ((flags & Flag.END_HEADERS) !== 0) return fragment;
    this.#streamId = streamId;
    this.#endStream = (flags & Flag.END_STREAM) !== 0;
    this.#parts = [Buffer.from(fragment)];
    this.#size = fragment.length;
    return undefined;
  }

  /** The frame after an unfinished HEADERS: the whole block once it ends, else undefined. */
  continuation(type: number, flags: number, streamId: number, fragment: Buffer): Buffer | undefined {
    if (type !== FrameType.CONTINUATION || streamId !== this.#streamId)
      throw protocolError("a field block interrupted by another frame (RFC 9113 §6.10)");
    // Each frame's header counts too: a flood of empty CONTINUATION frames ends like a large block.
    this.#size += FRAME_HEADER_LENGTH + fragment.length;
    if (this.#size > this.#maxBlockSize) throw tooLarge();
    if (fragment.length > 0) this.#parts.push(Buffer.from(fragment));
    if ((flags & Flag.END_HEADERS) === 0) return undefined;
    const block = Buffer.concat(this.#parts);
    this.#streamId = 0;
    this.#parts = [];
    this.#size = 0;
    return block;
  }
}

function tooLarge(): Http2SessionError {
  return new Http2SessionError(
    "a field block larger than twice our SETTINGS_MAX_HEADER_LIST_SIZE",
    ErrorCode.ENHANCE_YOUR_CALM,
    false,
  );
}
