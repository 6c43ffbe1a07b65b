import { createRequire } from "node:module";

/**
 * Node's own HTTP parser (llhttp, through the binding node:http uses: `_http_common`'s HTTPParser) as an
 * oracle for the client's response parser: what it reads of the first final response in some bytes.
 */

interface HttpParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | Error;
  finish(): undefined | Error;
  close(): void;
  [callback: number]: unknown;
}

interface HttpParserClass {
  new (): HttpParser;
  readonly RESPONSE: number;
  readonly kOnHeaders: number;
  readonly kOnHeadersComplete: number;
  readonly kOnBody: number;
  readonly kOnMessageComplete: number;
  readonly kOnExecute: number;
  /** Whitespace between a chunk size and its extensions, which RFC 9112 §7.1.1 allows (BWS). */
  readonly kLenientSpacesAfterChunkSize: number;
}

const { HTTPParser } = createRequire(import.meta.url)("_http_common") as { HTTPParser: HttpParserClass };

export interface OracleReading {
  /** The first final (non-1xx) response, once its head was read. */
  readonly status?: number;
  readonly reason?: string;
  /** Names lower-cased, values as Node reads them (Latin-1). */
  readonly fields?: string[];
  /** Its body as Latin-1. */
  readonly body: string;
  /** Node read that response to its end. */
  readonly complete: boolean;
  /** Node would keep the connection after it. */
  readonly keepAlive?: boolean;
  /** What Node refused before that response was complete. */
  readonly error?: string;
}

/** What llhttp reads of `raw` as the answer to a request (HEAD when `noBody`), the connection closing after it. */
export function llhttpReads(raw: Buffer, noBody: boolean): OracleReading {
  const parser = new HTTPParser();
  parser.initialize(HTTPParser.RESPONSE, {}, 0, HTTPParser.kLenientSpacesAfterChunkSize);
  let status: number | undefined;
  let reason: string | undefined;
  let fields: string[] | undefined;
  let keepAlive: boolean | undefined;
  let current = 0;
  let pendingFields: string[] = [];
  const body: Buffer[] = [];
  let complete = false;
  parser[HTTPParser.kOnHeaders] = (more: string[]) => pendingFields.push(...more);
  parser[HTTPParser.kOnHeadersComplete] = (
    _major: number,
    _minor: number,
    headers: string[] | undefined,
    _method: unknown,
    _url: unknown,
    code: number,
    phrase: string,
    _upgrade: boolean,
    shouldKeepAlive: boolean,
  ) => {
    const all = headers ?? pendingFields;
    pendingFields = [];
    current = code;
    if (code >= 200 && status === undefined) {
      status = code;
      reason = phrase;
      fields = all.map((item, i) => (i % 2 === 0 ? item.toLowerCase() : item));
      keepAlive = shouldKeepAlive;
    }
    return noBody && code >= 200 ? 1 : 0;
  };
  parser[HTTPParser.kOnBody] = (chunk: Buffer) => {
    if (current >= 200 && !complete) body.push(Buffer.from(chunk));
  };
  parser[HTTPParser.kOnMessageComplete] = () => {
    if (current >= 200) complete = true;
  };
  parser[HTTPParser.kOnExecute] = () => undefined;
  let error: string | undefined;
  const executed = parser.execute(raw);
  if (executed instanceof Error) error = (executed as Error & { code?: string }).code;
  else {
    const finished = parser.finish();
    if (finished instanceof Error) error = (finished as Error & { code?: string }).code;
  }
  parser.close();
  const read = { body: Buffer.concat(body).toString("latin1"), complete };
  return {
    ...read,
    ...(status === undefined ? {} : { status, reason, fields, keepAlive }),
    ...(error === undefined ? {} : { error }),
  };
}
