import { type ErrorAnswer, errorAnswer, type RouterError } from "./errors.js";

/**
 * The request id that follows a request: a valid incoming `X-Request-Id` is kept (an upstream proxy or the
 * client already named the request), anything else is replaced by a generated one. It goes to the backend,
 * back to the client, into the access log and into the router's error bodies. W3C Trace Context
 * (`traceparent`, `tracestate`) is a different thing and passes through untouched (core/http/headers.ts).
 *
 * Valid means 1 to MAX_REQUEST_ID_LENGTH characters of letters, digits and `-_.:+/=`: UUIDs, ULIDs, hex and
 * base64 ids pass; nothing that could split a log line, a header or a JSON string does.
 */
export const REQUEST_ID_HEADER = "x-request-id";
export const MAX_REQUEST_ID_LENGTH = 128;

/** One compiled regular expression: V8 scans a character class faster than a charCodeAt loop in JavaScript. */
const VALID_REQUEST_ID = new RegExp(`^[A-Za-z0-9._:+/=-]{1,${MAX_REQUEST_ID_LENGTH}}$`);

export function isValidRequestId(value: string): boolean {
  return VALID_REQUEST_ID.test(value);
}

/**
 * The id of a request: `incoming` when valid, else a new one from `generate` (crypto.randomUUID on Node and
 * Workers). A header sent twice arrives joined with ", " (web Headers) and is therefore replaced.
 */
export function requestIdOf(incoming: string | null | undefined, generate: () => string): string {
  return incoming !== null && incoming !== undefined && isValidRequestId(incoming) ? incoming : generate();
}

/** The contract's error answer with the request id in the body and in `X-Request-Id`. */
export function errorAnswerWithRequestId(error: RouterError, requestId: string): ErrorAnswer {
  const answer = errorAnswer(error);
  return {
    status: answer.status,
    headers: [...answer.headers, [REQUEST_ID_HEADER, requestId]],
    body: JSON.stringify({ error, requestId }),
  };
}

export function errorResponseWithRequestId(error: RouterError, requestId: string): Response {
  const answer = errorAnswerWithRequestId(error, requestId);
  return new Response(answer.body, {
    status: answer.status,
    headers: answer.headers.map(([name, value]) => [name, value]),
  });
}

/**
 * Request ids for one process: UUID-shaped (RFC 9562 version 4 and variant bits set), 74 random bits drawn
 * once from `randomBytes` and a 48-bit counter, so ids are unique within the process and, with
 * overwhelming probability, across processes. crypto.randomUUID costs a buffered random read and a 36-character
 * serialisation per request; this is a counter increment and a
 * concatenation. Request ids name requests; they are no secret (anyone holding one saw the request).
 */
export function createRequestIds(randomBytes: (size: number) => Uint8Array): () => string {
  const seed = randomBytes(10);
  const hex = (from: number, to: number) =>
    Array.from(seed.subarray(from, to), (byte) => byte.toString(16).padStart(2, "0")).join("");
  // xxxxxxxx-xxxx-4xxx-yxxx-<counter>: the version nibble 4 and the variant bits 10 (y in 8-b).
  const variant = (((seed[8] ?? 0) & 0x3f) | 0x80).toString(16).padStart(2, "0");
  const prefix = `${hex(0, 4)}-${hex(4, 6)}-4${hex(6, 8).slice(1)}-${variant}${hex(9, 10)}-`;
  let counter = 0;
  return () => {
    counter = counter >= 0xffffffffffff ? 0 : counter + 1;
    const digits = counter.toString(16);
    return prefix + (digits.length < 12 ? "000000000000".slice(digits.length) + digits : digits);
  };
}
