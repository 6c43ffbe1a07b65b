/**
 * Chunk data in pieces smaller than this is gathered across the chunks of one read and handed on at once: a
 * body in 1-byte chunks would otherwise cost a write to the client per byte, thousands per read.
 */
export const SMALL_PIECE_BYTES = 1024;

/** The small pieces of one read (views of its buffer), handed on together (response-parser.ts). */
export class GatheredPieces {
  readonly #pieces: Buffer[] = [];
  bytes = 0;

  add(piece: Buffer): void {
    this.#pieces.push(piece);
    this.bytes += piece.length;
  }

  /** What was gathered as one buffer (the one view, or the pieces joined); undefined when nothing was. */
  take(): Buffer | undefined {
    const pieces = this.#pieces;
    if (pieces.length === 0) return undefined;
    const chunk = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, this.bytes);
    this.clear();
    return chunk;
  }

  clear(): void {
    this.#pieces.length = 0;
    this.bytes = 0;
  }
}
