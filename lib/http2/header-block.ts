import { Http2SessionError } from "./errors.js";
import { ErrorCode, Flag, FrameType } from "./frames.js";
import type { HpackDecoder } from "./hpack.js";

/**
 * HEADERS and its CONTINUATION frames joined into one field block and decoded (RFC 9113 §4.3, §6.10). Every
 * block is decoded, even for a stream we closed, as the decoder's table is the connection's. The block's size on
 * the wire is bounded, so a CONTINUATION flood costs the peer its connection, not our memory. Throws
 * Http2SessionError, a connection error.
 */
export class HeaderBlockAssembler {
  readonly #decoder: HpackDecoder;
  readonly #maxBlockSize: number;
  /** The stream of the block under assembly; 0 when none. */
  #streamId = 0;
  #endStream = false;
  #parts: Buffer[] = [];
  #size = 0;

  constructor(decoder: HpackDecoder, maxBlockSize: number) {
    this.#decoder = decoder;
    this.#maxBlockSize = maxBlockSize;
  }

  /** CONTINUATION must come next (§6.10): nothing else may interleave. */
  get open(): boolean {
    return this.#streamId !== 0;
  }

  get streamId(): number {
    return this.#streamId;
  }

  get endStream(): boolean {
    return this.#endStream;
  }

  /** A HEADERS fragment (padding and priority removed): the fields once the block ends, else undefined. */
  headers(streamId: number, flags: number, fragment: Buffer): string[] | undefined {
    if (fragment.length > this.#maxBlockSize) throw tooLarge();
    if ((flags & Flag.END_HEADERS) !== 0) return this.#decode(fragment);
    this.#streamId = streamId;
    this.#endStream = (flags & Flag.END_STREAM) !== 0;
    this.#parts = [Buffer.from(fragment)];
    this.#size = fragment.length;
    return undefined;
  }

  /** The frame after an unfinished HEADERS: the fields once the block ends, else undefined. */
  continuation(type: number, flags: number, streamId: number, fragment: Buffer): string[] | undefined {
    if (type !== FrameType.CONTINUATION || streamId !== this.#streamId) {
      throw new Http2SessionError(
        "a field block interrupted by another frame (RFC 9113 §6.10)",
        ErrorCode.PROTOCOL_ERROR,
        false,
      );
    }
    this.#size += fragment.length;
    if (this.#size > this.#maxBlockSize) throw tooLarge();
    this.#parts.push(Buffer.from(fragment));
    if ((flags & Flag.END_HEADERS) === 0) return undefined;
    const block = Buffer.concat(this.#parts, this.#size);
    this.#streamId = 0;
    this.#parts = [];
    this.#size = 0;
    return this.#decode(block);
  }

  #decode(block: Buffer): string[] {
    try {
      return this.#decoder.decode(block);
    } catch (error) {
      throw new Http2SessionError(
        `a field block that cannot be decoded: ${(error as Error).message} (RFC 9113 §4.3)`,
        ErrorCode.COMPRESSION_ERROR,
        false,
        { cause: error },
      );
    }
  }
}

function tooLarge(): Http2SessionError {
  return new Http2SessionError(
    "a field block larger than twice our SETTINGS_MAX_HEADER_LIST_SIZE",
    ErrorCode.ENHANCE_YOUR_CALM,
    false,
  );
}
