/**
 * A response head as this client reads it (RFC 9112 §4, §5), strict where leniency lets a server and
 * whoever relays its answer disagree on the framing: only CRLF line ends, no obs-fold (§5.2), no whitespace
 * before a field's colon (§5.1), a Content-Length that is digits and agrees with any repetition (RFC 9110
 * §8.6), and no Content-Length next to a Transfer-Encoding (RFC 9112 §6.1: the request-smuggling pattern).
 * Field values are kept byte for byte as Latin-1, names lower-cased.
 */

/** The server's bytes are not an HTTP/1.1 response this client accepts. */
export class MalformedResponseError extends Error {
  override readonly name = "MalformedResponseError";
  readonly code = "UPSTREAM_MALFORMED_RESPONSE";
}

export interface ResponseHead {
  readonly status: number;
  /** Decoded as UTF-8 when it is not ASCII (what servers that send one past ASCII mean by it). */
  readonly reason: string;
  /** Name (lower-case), value, name, value ... in the server's order. */
  readonly fields: string[];
  readonly contentLength: number | undefined;
  /** Every Transfer-Encoding field's codings, joined. */
  readonly transferEncoding: string | undefined;
  /** RFC 9112 §9.3: HTTP/1.1 persists unless it says close; HTTP/1.0 only when it says keep-alive. */
  readonly persistent: boolean;
  /** The Keep-Alive `timeout` hint, in ms (RFC 2068 §19.7.1.1; still sent by Node and others). */
  readonly keepAliveHintMs: number | undefined;
}

const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: ([\t\x20-\x7e\x80-\xff]*))?$/;
/** RFC 9110 §5.6.2 token, a colon, optional whitespace, field-value characters (§5.5), CRLF. */
export const FIELD_LINE = /([!#$%&'*+.^_`|~0-9A-Za-z-]+):[\t ]*([\t\x20-\x7e\x80-\xff]*?)[\t ]*\r\n/y;
const CONTENT_LENGTH = /^\d{1,15}$/;

/**
 * `text`: the status line and field lines, each ending in CRLF. Undefined for an interim (1xx) head, which a
 * client skips (RFC 9110 §15.2); throws MalformedResponseError.
 */
export function parseResponseHead(text: string): ResponseHead | undefined {
  const lineEnd = text.indexOf("\r\n");
  const statusLine = STATUS_LINE.exec(text.slice(0, lineEnd));
  if (!statusLine) throw new MalformedResponseError("malformed status line");
  const status = Number(statusLine[2]);
  const fields: string[] = [];
  let contentLength: string | undefined;
  let transferEncoding: string | undefined;
  let connection = "";
  let keepAliveHintMs: number | undefined;
  FIELD_LINE.lastIndex = lineEnd + 2;
  while (FIELD_LINE.lastIndex < text.length) {
    const field = FIELD_LINE.exec(text);
    if (field === null) throw new MalformedResponseError("malformed header field");
    const name = (field[1] as string).toLowerCase();
    const value = field[2] as string;
    fields.push(name, value);
    if (name === "content-length") {
      if (!CONTENT_LENGTH.test(value) || (contentLength !== undefined && contentLength !== value)) {
        throw new MalformedResponseError("invalid Content-Length");
      }
      contentLength = value;
    } else if (name === "transfer-encoding") {
      transferEncoding = transferEncoding === undefined ? value : `${transferEncoding},${value}`;
    } else if (name === "connection") connection += `,${value.toLowerCase()}`;
    else if (name === "keep-alive") keepAliveHintMs = keepAliveHint(value);
  }
  if (status < 200) {
    // This client never asks to switch protocols.
    if (status === 101) throw new MalformedResponseError("unrequested protocol switch");
    return undefined;
  }
  if (contentLength !== undefined && transferEncoding !== undefined) {
    throw new MalformedResponseError("both Content-Length and Transfer-Encoding");
  }
  return {
    status,
    reason: reasonOf(statusLine[3]),
    fields,
    contentLength: contentLength === undefined ? undefined : Number(contentLength),
    transferEncoding,
    persistent:
      statusLine[1] === "1"
        ? !/\bclose\b/.test(connection)
        : // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 is faulty framing; the connection is closed after it.
          /\bkeep-alive\b/.test(connection) && transferEncoding === undefined,
    keepAliveHintMs,
  };
}

function reasonOf(latin1: string | undefined): string {
  if (latin1 === undefined) return "";
  for (let i = 0; i < latin1.length; i++) {
    if (latin1.charCodeAt(i) > 0x7f) return Buffer.from(latin1, "latin1").toString("utf8");
  }
  return latin1;
}

function keepAliveHint(value: string): number | undefined {
  const match = /(?:^|[,;\s])timeout=(\d{1,9})/i.exec(value);
  return match ? Number(match[1]) * 1_000 : undefined;
}
