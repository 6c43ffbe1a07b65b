import { transferCodingsOf, withoutOws } from "./syntax.js";

/** How a request's content is framed (RFC 9112 §6.3), as this client sends it (OutgoingRequest). */
export interface RequestContent {
  /** Its Content-Length; undefined when it is chunked. */
  readonly length: number | undefined;
  /** The transfer codings applied before the final chunked (e.g. `gzip`); undefined when there are none. */
  readonly transferCodings: string | undefined;
}

/** The request's framing cannot be read reliably: it must be refused (400) and the connection closed. */
export class InvalidRequestFramingError extends Error {
  override readonly name = "InvalidRequestFramingError";
}

const DIGITS = /^\d{1,15}$/;

/**
 * Whether a request has content, and how it is framed, from its fields (name, value, ...; names in any case,
 * as a server received them): a Transfer-Encoding whose last coding is chunked, else a Content-Length, else
 * none (RFC 9112 §6.3 rules 4-7 for requests). Throws InvalidRequestFramingError for a Transfer-Encoding that
 * does not end in chunked (rule 4), one next to a Content-Length (§6.1), or Content-Lengths that are not one
 * number.
 */
export function requestContentOf(fields: readonly string[]): RequestContent | undefined {
  let transferEncoding: string | undefined;
  let contentLength: string | undefined;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    if (name.length === 17 && name.toLowerCase() === "transfer-encoding") {
      const value = fields[i + 1] as string;
      transferEncoding = transferEncoding === undefined ? value : `${transferEncoding},${value}`;
    } else if (name.length === 14 && name.toLowerCase() === "content-length") {
      const value = withoutOws(fields[i + 1] as string);
      if (!DIGITS.test(value) || (contentLength !== undefined && contentLength !== value)) {
        throw new InvalidRequestFramingError("invalid Content-Length");
      }
      contentLength = value;
    }
  }
  if (transferEncoding !== undefined) {
    const codings = transferCodingsOf(transferEncoding);
    if (codings === undefined || !codings.chunked || contentLength !== undefined) {
      throw new InvalidRequestFramingError("a Transfer-Encoding that does not end in chunked");
    }
    return { length: undefined, transferCodings: codings.others };
  }
  return contentLength === undefined
    ? undefined
    : { length: Number(contentLength), transferCodings: undefined };
}
