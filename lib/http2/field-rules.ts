/**
 * What makes a field section well formed in HTTP/2 (RFC 9113 §8.2, §8.3), for heads and trailers either side
 * receives: pure functions over the decoder's flat lists (name, value, ...).
 */

/** §8.2.2: connection-specific fields make a message malformed. */
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
/** §8.3.2: three digits; RFC 9110 §15: 100 to 599. */
const STATUS = /^[1-5][0-9]{2}$/;

/** Negative, each its own: acceptHead() (message-receiver.ts) returns a length or one of these. */
export const NO_LENGTH = -1;
export const BAD_LENGTH = -2;
export const MALFORMED = -4;

/**
 * The status of a response head and the fields without it: :status must come first (§8.3: pseudo-header fields
 * precede the others), once, as three digits; a response has no other pseudo-header field. MALFORMED otherwise.
 * Removes :status from `fields`.
 */
export function takeStatus(fields: string[]): number {
  const status = fields[1] as string;
  if (fields[0] !== ":status" || !STATUS.test(status) || !regularFields(fields, 2)) return MALFORMED;
  fields.copyWithin(0, 2);
  fields.length -= 2;
  return Number(status);
}

/** A request's control data (§8.3.1); `authority` is "" when the client sent none. */
export interface RequestControl {
  readonly method: string;
  readonly scheme: string;
  readonly authority: string;
  readonly path: string;
}

/**
 * A request head's pseudo-header fields, removed from `fields`, or undefined when the head is malformed:
 * :method, :scheme and a non-empty :path each exactly once (CONNECT, which has neither, is not served), at most
 * one :authority, all before the regular fields, which must be well formed with no TE other than "trailers"
 * (§8.2.2).
 */
export function takeRequestControl(fields: string[]): RequestControl | undefined {
  let method: string | undefined;
  let scheme: string | undefined;
  let authority: string | undefined;
  let path: string | undefined;
  let at = 0;
  for (; at < fields.length; at += 2) {
    const name = fields[at] as string;
    if (name.charCodeAt(0) !== 0x3a) break;
    const value = fields[at + 1] as string;
    if (name === ":method" && method === undefined) method = value;
    else if (name === ":scheme" && scheme === undefined) scheme = value;
    else if (name === ":authority" && authority === undefined) authority = value;
    else if (name === ":path" && path === undefined && value !== "") path = value;
    else return undefined;
  }
  if (method === undefined || scheme === undefined || path === undefined) return undefined;
  if (!validControl(method, scheme, authority, path)) return undefined;
  if (!regularFields(fields, at) || !onlyTrailersTe(fields, at)) return undefined;
  fields.copyWithin(0, at);
  fields.length -= at;
  return { method, scheme, authority: authority ?? "", path };
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const SCHEME = /^(?:http|https)$/;

/**
 * §8.3.1: a token for :method (CONNECT, §8.5, is not served), http or https for :scheme, an origin-form :path
 * (or "*" for OPTIONS); no value carries NUL, CR or LF. An absolute-form :path would route on another host than
 * :authority.
 */
function validControl(method: string, scheme: string, authority: string | undefined, path: string): boolean {
  if (!TOKEN.test(method) || method === "CONNECT" || !SCHEME.test(scheme)) return false;
  if (authority !== undefined && INVALID_VALUE.test(authority)) return false;
  const originForm = path.charCodeAt(0) === 0x2f || (path === "*" && method === "OPTIONS");
  return originForm && !INVALID_VALUE.test(path);
}

/**
 * True when the fields from `from` on are well formed (§8.2.1) and hold no pseudo-header field (§8.3) and no
 * connection-specific one: what is passed on to an HTTP/1.1 peer cannot split its message.
 */
export function regularFields(fields: readonly string[], from: number): boolean {
  for (let i = from; i < fields.length; i += 2) {
    const name = fields[i] as string;
    if (name.length === 0 || INVALID_NAME.test(name) || CONNECTION_SPECIFIC.has(name)) return false;
    if (INVALID_VALUE.test(fields[i + 1] as string)) return false;
  }
  return true;
}

/** §8.2.2: TE may appear in a request, with no value but "trailers". */
function onlyTrailersTe(fields: readonly string[], from: number): boolean {
  for (let i = from; i < fields.length; i += 2) {
    if (fields[i] === "te" && fields[i + 1] !== "trailers") return false;
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
