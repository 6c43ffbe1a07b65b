import { compressionError } from "./api.js";

/**
 * HPACK's Huffman code (RFC 7541 §5.2, Appendix B). The code is canonical: codes of one length are
 * consecutive in symbol order, and each length's first code follows the last of the length before. So
 * the 257 code lengths (symbol 256 is EOS) define it whole, and the decoder is built from them at load.
 */
export const CODE_LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28,
  28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7,
  8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19,
  13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13,
  28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21,
  22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23,
  22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25,
  25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
];
const EOS = 256;

/** Each symbol's code, by the canonical rule. */
export function canonicalCodes(): number[] {
  const order = CODE_LENGTHS.map((length, symbol) => ({ length, symbol })).sort(
    (a, b) => a.length - b.length || a.symbol - b.symbol,
  );
  const codes = new Array<number>(CODE_LENGTHS.length).fill(0);
  let code = 0;
  let length = order[0]?.length ?? 0;
  for (const entry of order) {
    code *= 2 ** (entry.length - length);
    length = entry.length;
    codes[entry.symbol] = code;
    code += 1;
  }
  return codes;
}

/**
 * The decoder walks the code's binary tree four bits at a time. A state is an inner node (256 of them: a
 * tree of 257 leaves); for each state and nibble the tables give the next state, the symbol completed on
 * the way (a code is at least 5 bits, so a nibble completes at most one), and whether EOS was met.
 */
const STATES = 256;
const NEXT = new Uint8Array(STATES * 16);
const EMIT = new Int16Array(STATES * 16).fill(-1);
/** A string may end in this state: fewer than 8 bits into the code, all of them ones (EOS's prefix, §5.2). */
const ACCEPTS = new Uint8Array(STATES);

function buildDecoder(): void {
  const codes = canonicalCodes();
  // children[2 * node + bit]: an inner node (> 0), a leaf (-1 - symbol), or 0 while unset (the root is no child).
  const children = new Int32Array(STATES * 2);
  let nodes = 1;
  CODE_LENGTHS.forEach((length, symbol) => {
    let node = 0;
    for (let bit = length - 1; bit >= 0; bit--) {
      const slot = 2 * node + (Math.floor((codes[symbol] ?? 0) / 2 ** bit) % 2);
      if (bit === 0) children[slot] = -1 - symbol;
      else {
        if (children[slot] === 0) children[slot] = nodes++;
        node = children[slot] as number;
      }
    }
  });
  const depth = new Uint8Array(STATES);
  const ones = new Uint8Array(STATES);
  ones[0] = 1;
  for (let node = 0; node < nodes; node++) {
    for (let bit = 0; bit < 2; bit++) {
      const child = children[2 * node + bit] as number;
      if (child < 0) continue;
      depth[child] = (depth[node] as number) + 1;
      ones[child] = ones[node] === 1 && bit === 1 ? 1 : 0;
    }
    ACCEPTS[node] = ones[node] === 1 && (depth[node] as number) < 8 ? 1 : 0;
    for (let nibble = 0; nibble < 16; nibble++) {
      let state = node;
      let emitted = -1;
      for (let bit = 3; bit >= 0; bit--) {
        const child = children[2 * state + ((nibble >> bit) & 1)] as number;
        if (child >= 0) state = child;
        else {
          emitted = -1 - child;
          state = 0;
        }
      }
      NEXT[node * 16 + nibble] = state;
      EMIT[node * 16 + nibble] = emitted;
    }
  }
}
buildDecoder();

/** Decodes `length` Huffman-coded octets of `source` at `offset` into `out` (room for 8 * length / 5 octets), returning the count. */
export function huffmanDecode(source: Buffer, offset: number, length: number, out: Buffer): number {
  let state = 0;
  let written = 0;
  for (let i = offset; i < offset + length; i++) {
    const octet = source[i] as number;
    for (let shift = 4; shift >= 0; shift -= 4) {
      const entry = state * 16 + ((octet >> shift) & 15);
      const symbol = EMIT[entry] as number;
      if (symbol === EOS) throw compressionError("Huffman string contains EOS (RFC 7541 §5.2)");
      if (symbol >= 0) out[written++] = symbol;
      state = NEXT[entry] as number;
    }
  }
  if (ACCEPTS[state] !== 1) throw compressionError("Huffman string padded with other than EOS's prefix");
  return written;
}
