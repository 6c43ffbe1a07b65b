import type { ConnectionWait } from "./connection-timer.js";

const TIMEOUTS = {
  connect: { message: "connect timed out", fields: { code: "ETIMEDOUT", syscall: "connect" } },
  head: { message: "server sent no response head in time", fields: { code: "UPSTREAM_HEAD_TIMEOUT" } },
  body: { message: "backend stopped sending the response body", fields: { code: "UPSTREAM_BODY_TIMEOUT" } },
} as const;

/** The error of a request whose connection waited too long for `wait`. */
export function timeoutError(wait: Exclude<ConnectionWait, "idle">): Error {
  return Object.assign(new Error(TIMEOUTS[wait].message), TIMEOUTS[wait].fields);
}

/** The connection was destroyed on this side (its pool destroyed, or its user gave up): the server did nothing. */
export class LocalAbortError extends Error {
  override readonly name = "LocalAbortError";
  readonly code = "UPSTREAM_LOCAL_ABORT";
}

/** The server's bytes are not an HTTP/1.1 response this client accepts. */
export class MalformedResponseError extends Error {
  override readonly name = "MalformedResponseError";
  readonly code = "UPSTREAM_MALFORMED_RESPONSE";
}

/** The body gave more or fewer bytes than the Content-Length the head declared: nothing past it went. */
export class BodyLengthError extends Error {
  override readonly name = "BodyLengthError";
  readonly code = "UPSTREAM_BODY_LENGTH";
}

/** The server closed the connection before it sent any byte of the response. */
export class ServerClosedError extends Error {
  override readonly name = "ServerClosedError";
  readonly code = "UPSTREAM_CLOSED";
}
