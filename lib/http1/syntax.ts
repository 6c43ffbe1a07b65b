/**
 * The HTTP/1.1 syntax this client reads, each piece in one linear scan whatever its bytes (a backtracking
 * pattern over OWS next to field content costs the square of it): field lines (RFC 9112 §5), chunk-size lines
 * (§7.1) and Transfer-Encoding lists (§6.1). Text is Latin-1: one character per byte.
 */

/** 1 for the characters of a token (RFC 9110 §5.6.2). */
const TOKEN = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TOKEN[c.charCodeAt(0)] = 1;
}

/**
 * 1 for the characters of a field value (RFC 9110 §5.5): HTAB, SP, VCHAR and obs-text; the same are qdtext and
 * what a quoted-pair may escape (§5.6.4), never DEL or other controls.
 */
const FIELD_VALUE = new Uint8Array(256).fill(1, 0x20, 0x7f).fill(1, 0x80);
FIELD_VALUE[0x09] = 1;

/** Significant hex digits in a chunk size: 2^48 bytes and more is no chunk this client will read. */
const MAX_SIZE_DIGITS = 12;

/**
 * Reads the field line that starts at `from` in `text`: pushes its name (lower-cased) and its value (without
 * the whitespace around it) onto `fields` and returns where the next line starts, or -1 when the line is not a
 * field line: no whitespace before the colon (§5.1), no obs-fold or bare CR or LF (§5.2), only CRLF ends it.
 */
export function readFieldLine(text: string, from: number, fields: string[]): number {
  const length = text.length;
  let at = from;
  while (at < length && TOKEN[text.charCodeAt(at)] === 1) at++;
  if (at === from || text.charCodeAt(at) !== 0x3a) return -1;
  const colon = at++;
  while (at < length && isOws(text.charCodeAt(at))) at++;
  const start = at;
  let end = at;
  for (; at < length; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x0d) break;
    if (FIELD_VALUE[code] !== 1) return -1;
    if (!isOws(code)) end = at + 1;
  }
  if (text.charCodeAt(at + 1) !== 0x0a) return -1;
  fields.push(text.slice(from, colon).toLowerCase(), text.slice(start, end));
  return at + 2;
}

/**
 * The size the chunk-size line `data[start, end)` (without its CRLF) gives, or -1 when it is not one: hex
 * digits, any number of them leading zeros, then chunk extensions (`;name` or `;name=value`, the value a token
 * or a quoted-string, §7.1.1), read and dropped. Whitespace is accepted only between the size and the first
 * `;` (the BWS the grammar allows there); inside the extensions it is refused, as Node's own parser refuses
 * it, so a line this client reads is one a Node client reads the same way.
 */
export function chunkSizeOf(data: Uint8Array, start: number, end: number): number {
  let at = start;
  let size = 0;
  let significant = 0;
  for (; at < end; at++) {
    const value = hexValue(data[at] as number);
    if (value < 0) break;
    if (significant > 0 || value > 0) {
      if (++significant > MAX_SIZE_DIGITS) return -1;
      size = size * 16 + value;
    }
  }
  if (at === start) return -1;
  return at === end || extensionsValid(data, at, end) ? size : -1;
}

/** Whether what follows the size, from `at` to `end`, is BWS and then chunk extensions, nothing else. */
function extensionsValid(data: Uint8Array, at: number, end: number): boolean {
  while (at < end && isOws(data[at] as number)) at++;
  if (at === end) return false;
  while (at < end) {
    if (data[at] !== 0x3b /* ; */) return false;
    at = tokenEnd(data, at + 1, end);
    if (at < 0) return false;
    if (at < end && data[at] === 0x3d /* = */) {
      at = data[at + 1] === 0x22 /* " */ ? quotedStringEnd(data, at + 2, end) : tokenEnd(data, at + 1, end);
      if (at < 0) return false;
    }
  }
  return true;
}

/** Where the token that starts at `at` ends; -1 when there is none. */
function tokenEnd(data: Uint8Array, at: number, end: number): number {
  const start = at;
  while (at < end && TOKEN[data[at] as number] === 1) at++;
  return at === start ? -1 : at;
}

/** Where the quoted-string whose content starts at `at` ends (past its closing quote); -1 when it does not. */
function quotedStringEnd(data: Uint8Array, at: number, end: number): number {
  while (at < end) {
    const code = data[at] as number;
    if (code === 0x22) return at + 1;
    if (FIELD_VALUE[code] !== 1) return -1;
    // A quoted-pair: a backslash and what it escapes.
    if (code === 0x5c /* \ */ && (at + 1 >= end || FIELD_VALUE[data[at + 1] as number] !== 1)) return -1;
    at += code === 0x5c ? 2 : 1;
  }
  return -1;
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** The codings of a Transfer-Encoding list (RFC 9112 §6.1), every field's value joined. */
export interface TransferCodings {
  /** The last coding is chunked: the message is framed by it (RFC 9112 §6.3). */
  readonly chunked: boolean;
  /** The codings other than that final chunked, joined by ", "; undefined when there are none. */
  readonly others: string | undefined;
}

/**
 * The codings of `list` in the order they were applied; undefined when it names none or has an empty element.
 * Only SP and HTAB count as the whitespace around an element (a byte such as NBSP makes another coding, as it
 * does for Node's parser). RFC 9110 §5.6.1 would skip an empty element, but Node's parser takes `chunked,` for
 * another coding than chunked, and the framing of a message is never read here otherwise than a Node client
 * reads it.
 */
export function transferCodingsOf(list: string): TransferCodings | undefined {
  const codings: string[] = [];
  for (const element of list.split(",")) {
    const coding = withoutOws(element);
    if (coding === "") return undefined;
    codings.push(coding);
  }
  const chunked = (codings[codings.length - 1] as string).toLowerCase() === "chunked";
  if (chunked) codings.pop();
  return { chunked, others: codings.length === 0 ? undefined : codings.join(", ") };
}

/** `text` without the optional whitespace around it (SP and HTAB only, RFC 9110 §5.6.3). */
export function withoutOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isOws(text.charCodeAt(start))) start++;
  while (end > start && isOws(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
