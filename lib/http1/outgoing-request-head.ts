import type { OutgoingRequest } from "../http-exchange.js";

/**
 * The request head this client writes (RFC 9112 §3, §5). Its fields come validated from their boundary
 * (the caller's job); the whole head is still checked here with one pass, so no field can smuggle a line break
 * onto the wire.
 */

/** RFC 9110 §9.1: a method is a token. */
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** An origin-form target as it may go on the wire: no whitespace, control characters or characters past Latin-1. */
const TARGET = /^[\x21-\x7e\x80-\xff]+$/;
/** Field lines: token, colon, space, field-value characters (RFC 9110 §5.5), CRLF. */
const FIELD_LINES = /^(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+: [\t\x20-\x7e\x80-\xff]*\r\n)*$/;
const FRAMING_FIELD = /^(?:content-length|transfer-encoding)$/i;

/** The request cannot be written as HTTP/1.1: nothing was sent. */
export class InvalidRequestHeadError extends Error {
  override readonly name = "InvalidRequestHeadError";
}

/** RFC 9110 §8.6: a user agent should send Content-Length: 0 for these methods when there is no content. */
const PAYLOAD_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH"]);

/**
 * The head of `request` as a Latin-1 string. The framing fields are this client's to write, from the request's
 * own description of its content (the fields of those names in `headers` are left out): its Content-Length,
 * else its transfer codings with chunked last (RFC 9112 §6.1); a request without content says so only when its
 * method expects content.
 */
export function requestHead(request: OutgoingRequest): string {
  const { method, path, headers: fields, contentLength } = request;
  let lines = "";
  let count = 0;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    if ((name.length === 14 || name.length === 17) && FRAMING_FIELD.test(name)) continue;
    lines += `${name}: ${fields[i + 1]}\r\n`;
    count++;
  }
  if (contentLength !== undefined) {
    if (contentLength > 0 && request.body === null) {
      throw new InvalidRequestHeadError("a Content-Length with no body to send");
    }
    lines += `content-length: ${contentLength}\r\n`;
    count++;
  } else if (request.body !== null) {
    const codings = request.transferCodings;
    lines += `transfer-encoding: ${codings === undefined ? "" : `${codings}, `}chunked\r\n`;
    count++;
  } else if (PAYLOAD_METHODS.has(method)) {
    lines += "content-length: 0\r\n";
    count++;
  }
  if (!METHOD.test(method)) throw new InvalidRequestHeadError("invalid request method");
  if (!TARGET.test(path)) throw new InvalidRequestHeadError("invalid request path");
  // Every line is a valid field line, and there are as many lines as fields: no value held a line break that
  // would have made its own line (`1\r\nx-injected: 1` passes the line check, not the count).
  let breaks = 0;
  for (let at = lines.indexOf("\n"); at >= 0; at = lines.indexOf("\n", at + 1)) breaks++;
  if (!FIELD_LINES.test(lines) || breaks !== count) {
    throw new InvalidRequestHeadError("invalid request header field");
  }
  return `${method} ${path} HTTP/1.1\r\n${lines}\r\n`;
}
