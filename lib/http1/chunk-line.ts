import { isTokenChar } from "./field-lines.js";

/**
 * A chunk-size line (RFC 9112 §7.1): hex digits, any number of them leading zeros, then chunk extensions
 * (`;name` or `;name=value`, the value a token or a quoted-string, §7.1.1), read and dropped. Whitespace is
 * accepted only between the size and the first `;` (the BWS the grammar allows there); inside the extensions
 * it is refused, as Node's own parser refuses it, so a line this client reads is one a Node client reads the
 * same way. One scan, each byte looked at once.
 */

/** Significant hex digits in a chunk size: 2^48 bytes and more is no chunk this client will read. */
const MAX_SIZE_DIGITS = 12;

const SEMICOLON = 0x3b;
const EQUALS = 0x3d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The size the line `data[start, end)` (without its CRLF) gives, or -1 when it is not a chunk-size line. */
export function chunkSizeOf(data: Uint8Array, start: number, end: number): number {
  let at = start;
  let size = 0;
  let digits = 0;
  let significant = 0;
  for (; at < end; at++) {
    const value = hexValue(data[at] as number);
    if (value < 0) break;
    digits++;
    if (significant > 0 || value > 0) {
      if (++significant > MAX_SIZE_DIGITS) return -1;
      size = size * 16 + value;
    }
  }
  if (digits === 0) return -1;
  if (at === end) return size;
  return extensionsValid(data, at, end) ? size : -1;
}

/** Whether what follows the size, from `at` to `end`, is BWS and then chunk extensions, nothing else. */
function extensionsValid(data: Uint8Array, at: number, end: number): boolean {
  while (at < end && (data[at] === 0x20 || data[at] === 0x09)) at++;
  if (at === end) return false;
  while (at < end) {
    if (data[at] !== SEMICOLON) return false;
    at = tokenEnd(data, at + 1, end);
    if (at < 0) return false;
    if (at < end && data[at] === EQUALS) {
      at = data[at + 1] === QUOTE ? quotedStringEnd(data, at + 2, end) : tokenEnd(data, at + 1, end);
      if (at < 0) return false;
    }
  }
  return true;
}

/** Where the token that starts at `at` ends; -1 when there is none. */
function tokenEnd(data: Uint8Array, at: number, end: number): number {
  const start = at;
  while (at < end && isTokenChar(data[at] as number)) at++;
  return at === start ? -1 : at;
}

/** Where the quoted-string whose content starts at `at` ends (past its closing quote); -1 when it does not. */
function quotedStringEnd(data: Uint8Array, at: number, end: number): number {
  while (at < end) {
    const code = data[at] as number;
    if (code === QUOTE) return at + 1;
    if (code === BACKSLASH) {
      // quoted-pair: HTAB, SP, VCHAR or obs-text after the backslash (RFC 9110 §5.6.4).
      const escaped = data[at + 1];
      if (at + 1 >= end || escaped === undefined || !isQuotable(escaped)) return -1;
      at += 2;
    } else if (isQuotable(code)) at++;
    else return -1;
  }
  return -1;
}

/** qdtext and what a quoted-pair may escape: HTAB, SP, VCHAR, obs-text (never DEL or other controls). */
function isQuotable(code: number): boolean {
  return code === 0x09 || (code >= 0x20 && code !== 0x7f);
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}
