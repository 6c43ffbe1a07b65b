import { compressionError } from "./api.js";
import { huffmanDecode } from "./huffman.js";

/** What RFC 7541 §4.1 counts per entry besides its octets. */
const ENTRY_OVERHEAD = 32;

/** HPACK's static table (RFC 7541 Appendix A), index 1 first: "name" or "name value" per entry. */
const STATIC_TABLE: readonly (readonly [string, string])[] = (
  ":authority|:method GET|:method POST|:path /|:path /index.html|:scheme http|:scheme https|" +
  ":status 200|:status 204|:status 206|:status 304|:status 400|:status 404|:status 500|accept-charset|" +
  "accept-encoding gzip, deflate|accept-language|accept-ranges|accept|access-control-allow-origin|age|" +
  "allow|authorization|cache-control|content-disposition|content-encoding|content-language|" +
  "content-length|content-location|content-range|content-type|cookie|date|etag|expect|expires|from|" +
  "host|if-match|if-modified-since|if-none-match|if-range|if-unmodified-since|last-modified|link|" +
  "location|max-forwards|proxy-authenticate|proxy-authorization|range|referer|refresh|retry-after|" +
  "server|set-cookie|strict-transport-security|transfer-encoding|user-agent|vary|via|www-authenticate"
)
  .split("|")
  .map((entry) => {
    const space = entry.indexOf(" ");
    return space < 0 ? [entry, ""] : [entry.slice(0, space), entry.slice(space + 1)];
  });

/** For the encoder: a static name's first index, and the indexes of the values the table holds with it. */
const STATIC_NAMES = new Map<string, { index: number; values: Map<string, number> | undefined }>();
for (const [i, [name, value]] of STATIC_TABLE.entries()) {
  const known = STATIC_NAMES.get(name) ?? { index: i + 1, values: undefined };
  STATIC_NAMES.set(name, known);
  if (value === "") continue;
  known.values ??= new Map();
  known.values.set(value, i + 1);
}

/** Strings shorter than this are copied octet by octet: Buffer.write's own dispatch costs more for them. */
const SHORT_STRING = 64;

/**
 * The encoder of the router's requests: static-table indexes and literals without indexing (RFC 7541 §6.1,
 * §6.2.2), never the dynamic table. Values vary per request (ids, trace context), so indexing would mostly
 * evict; and with no table of its own the encoder never depends on the peer's SETTINGS_HEADER_TABLE_SIZE.
 */
export class HpackEncoder {
  #out = Buffer.allocUnsafe(16 * 1024);

  /**
   * One header block for [name, value, ...] (names lowercase, pseudo-header fields first, values latin1), as a
   * view of the encoder's own buffer: valid until its next call, so a caller copies it into its frame at once.
   */
  encode(fields: readonly string[]): Buffer {
    // Each field takes at most its octets plus a few of integer prefixes (lengths below 2^21: 4 octets).
    let size = 0;
    for (const field of fields) size += field.length + 5;
    if (size > this.#out.length) this.#out = Buffer.allocUnsafe(size);
    const out = this.#out;
    let at = 0;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const name = fields[i] as string;
      const value = fields[i + 1] as string;
      const known = STATIC_NAMES.get(name);
      const pair = known?.values?.get(value);
      if (pair !== undefined) {
        at = writeInteger(out, at, 0x80, 7, pair);
        continue;
      }
      if (known !== undefined) at = writeInteger(out, at, 0x00, 4, known.index);
      else {
        out[at++] = 0x00;
        at = writeString(out, at, name);
      }
      at = writeString(out, at, value);
    }
    return out.subarray(0, at);
  }
}

function writeInteger(out: Buffer, at: number, pattern: number, prefixBits: number, value: number): number {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out[at] = pattern | value;
    return at + 1;
  }
  out[at++] = pattern | max;
  let rest = value - max;
  while (rest >= 0x80) {
    out[at++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  out[at] = rest;
  return at + 1;
}

function writeString(out: Buffer, at: number, text: string): number {
  const length = text.length;
  let next = writeInteger(out, at, 0x00, 7, length);
  if (length >= SHORT_STRING) return next + out.write(text, next, "latin1");
  for (let i = 0; i < length; i++) out[next++] = text.charCodeAt(i);
  return next;
}

/**
 * The decoder of a connection's response header blocks (RFC 7541 §3): one per connection, as the dynamic
 * table is the connection's. Names and values come out as latin1 strings, octet for octet, as Node's own
 * HTTP/2 gives them.
 */
export class HpackDecoder {
  /** Newest first (§2.3.3: the dynamic table's first index is the entry added last). */
  readonly #table: [string, string][] = [];
  #tableSize = 0;
  #limit: number;
  readonly #maxTableSize: number;
  readonly #maxListSize: number;
  /** Where decoding is in the block. */
  #at = 0;
  #oversized = false;
  /** Decoded Huffman strings land here before becoming strings. */
  #octets = Buffer.allocUnsafe(4096);

  /** maxTableSize: our SETTINGS_HEADER_TABLE_SIZE; maxListSize: the decoded size (§4.1 counting) a block may have. */
  constructor(maxTableSize = 4096, maxListSize = 64 * 1024) {
    this.#maxTableSize = maxTableSize;
    this.#limit = maxTableSize;
    this.#maxListSize = maxListSize;
  }

  /**
   * A whole header block as [name, value, ...], pseudo-header fields as they came. A list over the bound is
   * decoded whole all the same, as the dynamic table must follow the peer's encoder (RFC 9113 §10.5.1): its
   * fields are dropped and `oversized` says so. Throws a COMPRESSION_ERROR connection error (RFC 9113 §4.3).
   */
  decode(block: Buffer): string[] {
    const fields: string[] = [];
    this.#at = 0;
    let listSize = 0;
    while (this.#at < block.length) {
      const first = block[this.#at] as number;
      let name: string;
      let value: string;
      if (first >= 0x80) {
        const entry = this.#entry(this.#integer(block, 7));
        name = entry[0];
        value = entry[1];
      } else if (first >= 0x40) {
        name = this.#name(block, 6);
        value = this.#string(block);
        this.#add(name, value);
      } else if (first >= 0x20) {
        // §4.2: a size update only opens a block.
        if (listSize > 0) throw compressionError("dynamic table size update after a field");
        const size = this.#integer(block, 5);
        if (size > this.#maxTableSize) throw compressionError("dynamic table size update above the setting");
        this.#limit = size;
        this.#evict(0);
        continue;
      } else {
        name = this.#name(block, 4);
        value = this.#string(block);
      }
      listSize += name.length + value.length + ENTRY_OVERHEAD;
      if (listSize <= this.#maxListSize) fields.push(name, value);
    }
    this.#oversized = listSize > this.#maxListSize;
    return this.#oversized ? [] : fields;
  }

  /** The last block's list was over the bound (its fields were dropped). */
  get oversized(): boolean {
    return this.#oversized;
  }

  #entry(index: number): readonly [string, string] {
    // §2.3.3: the static table first, then the dynamic; index 0 is in neither.
    const statics = STATIC_TABLE.length;
    const entry = index > statics ? this.#table[index - statics - 1] : STATIC_TABLE[index - 1];
    if (entry === undefined) throw compressionError(`index ${index} is in neither table`);
    return entry;
  }

  #name(block: Buffer, prefixBits: number): string {
    const index = this.#integer(block, prefixBits);
    return index === 0 ? this.#string(block) : this.#entry(index)[0];
  }

  #string(block: Buffer): string {
    const huffman = ((block[this.#at] as number) & 0x80) !== 0;
    const length = this.#integer(block, 7);
    const start = this.#at;
    if (length > block.length - start) throw compressionError("string runs past the header block");
    this.#at = start + length;
    if (!huffman) return block.toString("latin1", start, start + length);
    // A Huffman code is at least 5 bits: `length` octets decode to at most 8 * length / 5 symbols.
    const most = Math.ceil((length * 8) / 5);
    if (most > this.#octets.length) this.#octets = Buffer.allocUnsafe(most);
    return this.#octets.toString("latin1", 0, huffmanDecode(block, start, length, this.#octets));
  }

  /** An integer with an N-bit prefix (RFC 7541 §5.1); bounded, as a peer may send any number of octets. */
  #integer(block: Buffer, prefixBits: number): number {
    const max = (1 << prefixBits) - 1;
    let value = (block[this.#at++] as number) & max;
    if (value < max) return value;
    for (let shift = 0; shift <= 21; shift += 7) {
      if (this.#at >= block.length) throw compressionError("integer runs past the header block");
      const octet = block[this.#at++] as number;
      value += (octet & 0x7f) * 2 ** shift;
      if (octet < 0x80) return value;
    }
    throw compressionError("integer too large");
  }

  #add(name: string, value: string): void {
    const size = name.length + value.length + ENTRY_OVERHEAD;
    // §4.4: an entry larger than the table empties it and is not added.
    this.#evict(size);
    if (size <= this.#limit) {
      this.#table.unshift([name, value]);
      this.#tableSize += size;
    }
  }

  /** Evicts the oldest entries until `room` more octets fit (§4.3, §4.4). */
  #evict(room: number): void {
    while (this.#tableSize + room > this.#limit) {
      const oldest = this.#table.pop();
      if (oldest === undefined) break;
      this.#tableSize -= oldest[0].length + oldest[1].length + ENTRY_OVERHEAD;
    }
  }
}
