import { ServerResponse } from "node:http";
import { Http2ServerResponse } from "node:http2";
import type { Socket } from "node:net";
import { http2ResponseFieldObject } from "./http2/connection-headers.js";

/**
 * The client's response as the native proxy writes it, which Node's HTTP/1.x ServerResponse and its HTTP/2
 * compatibility response both are: a head (writeResponseHead), chunks whose write says when to wait for
 * 'drain', an end, and a 'close'.
 */
export interface ClientResponse extends NodeJS.EventEmitter {
  readonly writableLength: number;
  readonly writableFinished: boolean;
  /** HTTP/1.x only (HTTP/2's response leaves it out: its end is queued on the stream anyway). */
  readonly writableNeedDrain?: boolean;
  /** Undefined once an HTTP/2 response's stream closed. */
  readonly socket: Socket | null | undefined;
  write(chunk: Uint8Array): boolean;
  end(): unknown;
  destroy(error?: Error): unknown;
}

/**
 * Writes a relayed response head (`fields` a flat list, hop-by-hop fields removed) the way the client's
 * protocol takes it: HTTP/1.x as one writeHead of the list, with the backend's reason phrase when there is one;
 * HTTP/2 with neither a reason phrase (RFC 9113 §8.3.2 has only :status) nor a connection-specific field.
 */
export function writeResponseHead(
  outgoing: ClientResponse,
  status: number,
  reason: string | undefined,
  fields: string[],
): void {
  if (outgoing instanceof Http2ServerResponse) outgoing.writeHead(status, http2ResponseFieldObject(fields));
  else if (!(outgoing instanceof ServerResponse)) throw new TypeError("not a client response");
  else if (reason) outgoing.writeHead(status, reason, fields);
  else outgoing.writeHead(status, fields);
}

/**
 * The whole response went out before its 'close': the client did not go away. A stream the HTTP/2 client
 * reset reads as writableFinished too (Node ends a destroyed stream's writable side), so an HTTP/2 response
 * counts as whole once the proxy ended it.
 */
export function answeredWhole(outgoing: ClientResponse): boolean {
  return outgoing instanceof Http2ServerResponse ? outgoing.writableEnded : outgoing.writableFinished;
}
