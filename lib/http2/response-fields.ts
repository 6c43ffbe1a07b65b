/** What makes a response's field section malformed (RFC 9113 §8.1.1, §8.2.2, §8.3.2). */

/** §8.2.2: connection-specific fields have no place in HTTP/2. */
const CONNECTION_SPECIFIC = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

/** §8.2.1: a name is lowercase token characters; a value has no NUL, CR or LF and no whitespace at either end. */
const INVALID_NAME = /[^a-z0-9!#$%&'*+\-.^_`|~]/;
const INVALID_VALUE = /[\0\r\n]|^[\t ]|[\t ]$/;

export const MALFORMED = -1;
export const NO_LENGTH = -1;
export const BAD_LENGTH = -2;

/**
 * The status of a response head and the fields without it: :status must come first (§8.3: pseudo-header fields
 * precede the others), once, as three digits; a response has no other pseudo-header field. MALFORMED otherwise.
 * Removes :status from `fields`.
 */
export function takeStatus(fields: string[]): number {
  if (fields[0] !== ":status") return MALFORMED;
  const status = parseStatus(fields[1] as string);
  if (status === MALFORMED || !regularFields(fields, 2)) return MALFORMED;
  fields.splice(0, 2);
  return status;
}

function parseStatus(value: string): number {
  if (value.length !== 3) return MALFORMED;
  let status = 0;
  for (let i = 0; i < 3; i++) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return MALFORMED;
    status = status * 10 + digit;
  }
  return status >= 100 ? status : MALFORMED;
}

/**
 * True when the fields from `from` on are well formed (§8.2.1) and hold no pseudo-header field (§8.3) and no
 * connection-specific one: what is passed on to an HTTP/1.1 client cannot split its message.
 */
export function regularFields(fields: readonly string[], from: number): boolean {
  for (let i = from; i < fields.length; i += 2) {
    const name = fields[i] as string;
    if (name.length === 0 || INVALID_NAME.test(name) || CONNECTION_SPECIFIC.has(name)) return false;
    if (INVALID_VALUE.test(fields[i + 1] as string)) return false;
  }
  return true;
}

/**
 * §8.1.1: the content-length the DATA must add up to, NO_LENGTH when absent, BAD_LENGTH when it is not a
 * number or its values disagree.
 */
export function declaredLength(fields: readonly string[]): number {
  let length = NO_LENGTH;
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] !== "content-length") continue;
    const value = fields[i + 1] as string;
    if (!/^[0-9]{1,15}$/.test(value)) return BAD_LENGTH;
    const parsed = Number(value);
    if (length !== NO_LENGTH && parsed !== length) return BAD_LENGTH;
    length = parsed;
  }
  return length;
}
