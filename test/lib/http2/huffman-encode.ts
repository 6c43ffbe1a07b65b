import { CODE_LENGTHS, canonicalCodes } from "../../../lib/http2/huffman.js";

const CODES = canonicalCodes();

/** The Huffman coding of a latin1 string (RFC 7541 §5.2): what a peer's encoder sends, for the decoder's tests. */
export function huffmanEncode(text: string): Buffer {
  const out: number[] = [];
  let pending = 0;
  let bits = 0;
  for (let i = 0; i < text.length; i++) {
    const symbol = text.charCodeAt(i) & 0xff;
    const length = CODE_LENGTHS[symbol] as number;
    pending = pending * 2 ** length + (CODES[symbol] as number);
    bits += length;
    while (bits >= 8) {
      bits -= 8;
      out.push(Math.floor(pending / 2 ** bits) & 0xff);
      pending %= 2 ** bits;
    }
  }
  if (bits > 0) out.push(((pending << (8 - bits)) | ((1 << (8 - bits)) - 1)) & 0xff);
  return Buffer.from(out);
}
