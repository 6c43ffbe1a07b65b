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

/** The request cannot be written as HTTP/1.1: nothing was sent. */
export class InvalidRequestHeadError extends Error {
  override readonly name = "InvalidRequestHeadError";
}

/** How a request's content is framed on the wire (RFC 9112 §6). */
export type Framing = "declared" | "chunked" | "empty" | "none";

/** RFC 9110 §8.6: a user agent should send Content-Length: 0 for these methods when there is no content. */
const PAYLOAD_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH"]);

/**
 * The request states its own Content-Length (declared); else a body is sent chunked; else a method that
 * expects content says it has none (empty); anything else sends no framing field.
 */
export function framingOf(method: string, fields: readonly string[], hasBody: boolean): Framing {
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    if (name.length === 14 && name.toLowerCase() === "content-length") return "declared";
  }
  if (hasBody) return "chunked";
  return PAYLOAD_METHODS.has(method) ? "empty" : "none";
}

const FRAMING_LINE: Readonly<Record<Framing, string>> = {
  declared: "",
  none: "",
  chunked: "transfer-encoding: chunked\r\n",
  empty: "content-length: 0\r\n",
};

/** The head as a Latin-1 string, with the framing field `framing` calls for. */
export function requestHead(
  method: string,
  path: string,
  fields: readonly string[],
  framing: Framing,
): string {
  let lines = "";
  for (let i = 0; i < fields.length; i += 2) lines += `${fields[i]}: ${fields[i + 1]}\r\n`;
  const framingLine = FRAMING_LINE[framing];
  lines += framingLine;
  if (!METHOD.test(method)) throw new InvalidRequestHeadError("invalid request method");
  if (!TARGET.test(path)) throw new InvalidRequestHeadError("invalid request path");
  // Every line is a valid field line, and there are as many lines as fields: no value held a line break that
  // would have made its own line (`1\r\nx-injected: 1` passes the line check, not the count).
  const count = fields.length / 2 + (framingLine === "" ? 0 : 1);
  if (!FIELD_LINES.test(lines) || lineCount(lines) !== count) {
    throw new InvalidRequestHeadError("invalid request header field");
  }
  return `${method} ${path} HTTP/1.1\r\n${lines}\r\n`;
}

function lineCount(lines: string): number {
  let count = 0;
  for (let at = lines.indexOf("\n"); at >= 0; at = lines.indexOf("\n", at + 1)) count++;
  return count;
}
