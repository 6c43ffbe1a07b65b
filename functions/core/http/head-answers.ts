import type { ErrorAnswer } from "./errors.js";

/**
 * Fields whose value comes from the content: its type, length, coding and language (RFC 9110 §8.3-8.6).
 * A router answer names them in lower case (core/http/errors.ts).
 */
const CONTENT_FIELDS: ReadonlySet<string> = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "content-language",
]);

/**
 * The router's own answer to a HEAD: its GET's status and fields without those that describe the content, and
 * no content. RFC 9110 §9.3.2 lets a HEAD answer omit "header fields for which a value is determined only while
 * generating the content"; a client that decodes whatever is typed JSON (the Gateway API conformance suite's
 * does) would otherwise read an empty body as JSON and fail. The answer still ends at its head (RFC 9112 §6.3:
 * an answer to HEAD has no content whatever its fields say), so the connection stays usable.
 */
export function headAnswer(answer: ErrorAnswer): ErrorAnswer {
  return {
    status: answer.status,
    headers: answer.headers.filter(([name]) => !CONTENT_FIELDS.has(name)),
    body: "",
  };
}
