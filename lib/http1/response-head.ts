import { MalformedResponseError } from "./client-errors.js";
import { readFieldLine, type TransferCodings, transferCodingsOf } from "./syntax.js";

/**
 * A response head as this client reads it (RFC 9112 §4, §5), strict where leniency lets a server and
 * whoever relays its answer disagree on the framing: only CRLF line ends, no obs-fold (§5.2), no whitespace
 * before a field's colon (§5.1), one Content-Length of digits (RFC 9110 §8.6 lets a recipient refuse a
 * repeated one, and a client relayed two would refuse them), no Content-Length next to a Transfer-Encoding
 * (RFC 9112 §6.1: the request-smuggling pattern), and a status code of 100-599 (RFC 9110 §15). Field lines
 * are read in time linear in their length (syntax.ts). Values are kept byte for byte as Latin-1, names
 * lower-cased.
 */

export interface ResponseHead {
  readonly status: number;
  /** Decoded as UTF-8 when it is not ASCII (what servers that send one past ASCII mean by it). */
  readonly reason: string;
  /** Name (lower-case), value, name, value ... in the server's order. */
  readonly fields: string[];
  readonly contentLength: number | undefined;
  /** The body is chunked: a Transfer-Encoding's last coding is chunked (RFC 9112 §6.3). */
  readonly chunked: boolean;
  /**
   * The transfer codings still applied to the body as this client hands it on (all but a final chunked, which
   * it removes), e.g. `gzip`; undefined when none are. A Transfer-Encoding that does not end in chunked makes
   * the body run until the connection closes (§6.3).
   */
  readonly transferCodings: string | undefined;
  /** RFC 9112 §9.3: HTTP/1.1 persists unless it says close; HTTP/1.0 only when it says keep-alive. */
  readonly persistent: boolean;
  /** The Keep-Alive `timeout` hint, in ms (RFC 2068 §19.7.1.1; still sent by Node and others). */
  readonly keepAliveHintMs: number | undefined;
}

/** Where trailer fields are read into before they are dropped. */
const SCRATCH: string[] = [];

const STATUS_LINE = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: ([\t\x20-\x7e\x80-\xff]*))?$/;
const CONTENT_LENGTH = /^\d{1,15}$/;

/**
 * `text`: the status line and field lines, each ending in CRLF. Undefined for an interim (1xx) head, which a
 * client skips (RFC 9110 §15.2), but for the 101 of an `upgrade` it asked for; throws MalformedResponseError.
 */
export function parseResponseHead(text: string, upgrade = false): ResponseHead | undefined {
  const lineEnd = text.indexOf("\r\n");
  const statusLine = STATUS_LINE.exec(text.slice(0, lineEnd));
  if (!statusLine) throw new MalformedResponseError("malformed status line");
  const status = Number(statusLine[2]);
  const fields: string[] = [];
  let contentLength: string | undefined;
  let transferEncoding: string | undefined;
  let connection = "";
  let keepAliveHintMs: number | undefined;
  for (let at = lineEnd + 2; at < text.length; ) {
    const line = at;
    at = readFieldLine(text, at, fields);
    if (at < 0) throw new MalformedResponseError("malformed header field");
    const name = fields[fields.length - 2] as string;
    const value = fields[fields.length - 1] as string;
    if (name === "content-length") {
      if (!CONTENT_LENGTH.test(value) || contentLength !== undefined || hasTab(text, line, at, name, value)) {
        throw new MalformedResponseError("invalid Content-Length");
      }
      contentLength = value;
    } else if (name === "transfer-encoding") {
      if (hasTab(text, line, at, name, value)) throw new MalformedResponseError("a tab in Transfer-Encoding");
      transferEncoding = transferEncoding === undefined ? value : `${transferEncoding},${value}`;
    } else if (name === "connection") connection += `,${value.toLowerCase()}`;
    else if (name === "keep-alive") keepAliveHintMs = keepAliveHint(value);
  }
  if (isInterim(status, statusLine[1] === "0", upgrade)) return undefined;
  const codings = framingCodings(contentLength !== undefined, transferEncoding);
  return {
    status,
    reason: reasonOf(statusLine[3]),
    fields,
    contentLength: contentLength === undefined ? undefined : Number(contentLength),
    chunked: codings?.chunked ?? false,
    transferCodings: codings?.others,
    persistent: persists(statusLine[1] === "1", connection, transferEncoding !== undefined),
    keepAliveHintMs,
  };
}

/**
 * Checks one trailer field line (RFC 9112 §7.1.2), CRLF included, for a proxy to drop (RFC 9110 §6.5.1). A field
 * that frames a message has no place there (§6.5.1), and Node's parser refuses one.
 */
export function checkTrailerField(line: string): void {
  const name = readFieldLine(line, 0, SCRATCH) < 0 ? undefined : SCRATCH[0];
  SCRATCH.length = 0;
  if (name === undefined || name === "content-length" || name === "transfer-encoding") {
    throw new MalformedResponseError("malformed trailer field");
  }
}

/**
 * An interim head, skipped. 1xx answers are HTTP/1.1's (RFC 9110 §15.2), and after an HTTP/1.0 one Node's own
 * parser takes the connection as closed; a switch of protocols is one only when asked for.
 */
function isInterim(status: number, http10: boolean, upgrade: boolean): boolean {
  if (status >= 200 || (status === 101 && upgrade)) return false;
  if (status === 101) throw new MalformedResponseError("unrequested protocol switch");
  if (http10) throw new MalformedResponseError("an interim answer in HTTP/1.0");
  return true;
}

/** The Transfer-Encoding's codings (undefined without one); throws when the framing fields contradict. */
function framingCodings(
  hasLength: boolean,
  transferEncoding: string | undefined,
): TransferCodings | undefined {
  if (transferEncoding === undefined) return undefined;
  if (hasLength) throw new MalformedResponseError("both Content-Length and Transfer-Encoding");
  const codings = transferCodingsOf(transferEncoding);
  if (codings === undefined) {
    throw new MalformedResponseError("a Transfer-Encoding with no coding or an empty one");
  }
  return codings;
}

/**
 * A tab in a framing field: RFC 9110 §5.6.3 makes it whitespace as a space is, but Node's own parser reads
 * `chunked<HTAB>` as another coding and refuses a Content-Length with one; such a field is refused, so that no
 * response is framed here one way and by a Node client another.
 */
function hasTab(text: string, from: number, to: number, name: string, value: string): boolean {
  // `name: value` or `name:\tvalue` leaves no room for another: only a longer line is searched.
  if (to - from - name.length - value.length <= 4 && text.charCodeAt(to - 3) !== 0x09) return false;
  for (let at = from; at < to; at++) if (text.charCodeAt(at) === 0x09) return true;
  return false;
}

/**
 * RFC 9112 §9.3: HTTP/1.1 persists unless a Connection option says close; HTTP/1.0 only when one says
 * keep-alive, and never after a Transfer-Encoding (§6.1: faulty framing in HTTP/1.0). `connection` holds every
 * Connection value, lower-cased, each after a comma. Where Node's parser is stricter, so is this: a
 * keep-alive option has no tab around it.
 */
function persists(http11: boolean, connection: string, transferCoded: boolean): boolean {
  // What most servers send, without a split.
  if (connection === "" || connection === ",keep-alive")
    return http11 || (connection !== "" && !transferCoded);
  let close = false;
  let keepAlive = false;
  for (const option of connection.split(",")) {
    if (option.trim() === "close") close = true;
    else if (/^ *keep-alive *$/.test(option)) keepAlive = true;
  }
  return http11 ? !close : keepAlive && !close && !transferCoded;
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
