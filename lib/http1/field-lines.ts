/**
 * Field lines (RFC 9112 §5: `name ":" OWS value OWS CRLF`) read in time linear in their length whatever their
 * bytes (a backtracking pattern over OWS next to field content costs the square of it). The text is Latin-1:
 * one character per byte.
 */

/** 1 for the characters of a token (RFC 9110 §5.6.2). */
const TOKEN = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TOKEN[c.charCodeAt(0)] = 1;
}

/** 1 for the characters of a field value (RFC 9110 §5.5): HTAB, SP, VCHAR and obs-text. */
const FIELD_VALUE = new Uint8Array(256);
FIELD_VALUE[0x09] = 1;
for (let c = 0x20; c <= 0x7e; c++) FIELD_VALUE[c] = 1;
for (let c = 0x80; c <= 0xff; c++) FIELD_VALUE[c] = 1;

/** Whether `code` may appear in a token. */
export function isTokenChar(code: number): boolean {
  return TOKEN[code] === 1;
}

/**
 * Reads the field line that starts at `from` in `text`: pushes its name (lower-cased) and its value (without
 * the whitespace around it) onto `fields` and returns where the next line starts, or -1 when the line is not a
 * field line: no whitespace before the colon (§5.1), no obs-fold or bare CR or LF (§5.2), only CRLF ends it.
 * One pass: every character is looked at once.
 */
export function readFieldLine(text: string, from: number, fields: string[]): number {
  const length = text.length;
  let at = from;
  while (at < length && TOKEN[text.charCodeAt(at)] === 1) at++;
  if (at === from || text.charCodeAt(at) !== 0x3a) return -1;
  const colon = at++;
  while (at < length && isWhitespace(text.charCodeAt(at))) at++;
  const start = at;
  let end = at;
  for (; at < length; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x0d) break;
    if (FIELD_VALUE[code] !== 1) return -1;
    if (code !== 0x20 && code !== 0x09) end = at + 1;
  }
  if (text.charCodeAt(at + 1) !== 0x0a) return -1;
  fields.push(text.slice(from, colon).toLowerCase(), text.slice(start, end));
  return at + 2;
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
