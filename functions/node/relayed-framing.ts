import type { ExchangeHead } from "../../lib/http-exchange.js";

/** The backend's answer cannot be relayed as it came: a 502, as any answer the router cannot pass on. */
export class UnrelayableResponseError extends Error {
  override readonly name = "UnrelayableResponseError";
}

/** Chunked among the codings of head.transferCodings (any case, joined by ", ": lib/http1/syntax.ts). */
const CHUNKED = /(?:^|, )chunked(?:,|$)/i;

/**
 * Completes `fields`, the relayed response's (hop-by-hop fields, Transfer-Encoding among them, removed), so
 * that Node's ServerResponse frames the body as the backend did:
 * - a 204 carries no Content-Length (RFC 9110 §8.6: a server must not send one); a 304 keeps the backend's,
 *   which describes the selected representation (§8.6 allows it);
 * - transfer codings the backend applied besides chunked (`gzip, chunked`, or a `gzip` body that ran until the
 *   close) go on as `<codings>, chunked`, and Node chunks the body since the list ends in chunked (RFC 9112
 *   §6.1). A list with chunked anywhere else could only be relayed by chunking twice, and a client speaking
 *   HTTP/1.0 may be sent no transfer coding at all (§6.1): both are refused.
 * Returns the error when the response cannot be relayed.
 */
export function relayFraming(
  head: ExchangeHead,
  fields: string[],
  clientSpeaks11: boolean,
): UnrelayableResponseError | undefined {
  const { status, transferCodings } = head;
  if (status === 204) {
    for (let i = fields.length - 2; i >= 0; i -= 2) if (fields[i] === "content-length") fields.splice(i, 2);
  }
  if (transferCodings === undefined || status === 204 || status === 304) return undefined;
  if (!clientSpeaks11) return new UnrelayableResponseError("transfer-coded response for an HTTP/1.0 client");
  if (CHUNKED.test(transferCodings)) return new UnrelayableResponseError("chunked before another coding");
  fields.push("transfer-encoding", `${transferCodings}, chunked`);
  return undefined;
}
