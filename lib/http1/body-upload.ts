import type { Socket } from "node:net";
import type { BodySink, BodySource } from "../http-exchange.js";
import { BodyLengthError } from "./client-errors.js";

/** What an upload tells its connection. */
export interface UploadEnd {
  /** The whole body (and, when chunked, its last chunk) was written. */
  sent(): void;
  /** The body's source failed (its client went away mid-body), or did not match its length: not completed. */
  failed(error: Error): void;
}

const LAST_CHUNK = "0\r\n\r\n";

/**
 * A request body streamed to the server's socket (RFC 9112 §6, §7.1): as is when the head declared its
 * Content-Length, else chunked. A declared length is kept to the byte: a chunk that would go past it is not
 * written, and a body that ends short of it fails, since the server would read the next request's bytes as
 * this body's, or wait for bytes that never come. The body is read only while the socket takes more (a full
 * socket holds it until 'drain'), from the moment the upload starts, once the head is on its way.
 */
export class BodyUpload implements BodySink {
  readonly #socket: Socket;
  readonly #body: BodySource;
  /** Bytes the declared Content-Length still allows; undefined when chunked. */
  #remaining: number | undefined;
  readonly #end: UploadEnd;
  #stopped = false;

  constructor(socket: Socket, body: BodySource, contentLength: number | undefined, end: UploadEnd) {
    this.#socket = socket;
    this.#body = body;
    this.#remaining = contentLength;
    this.#end = end;
  }

  /** Separate from the constructor: a body read whole already may end (and tell `sent`) at once. */
  start(): void {
    this.#body.start(this);
  }

  /** The exchange ended first (answered early, failed or cut): the body is no longer wanted. */
  stop(): void {
    if (this.#finish()) this.#body.stop();
  }

  bodyData(chunk: Buffer): boolean {
    if (this.#stopped || chunk.length === 0) return true;
    const socket = this.#socket;
    let room: boolean;
    if (this.#remaining === undefined) {
      socket.cork();
      socket.write(`${chunk.length.toString(16)}\r\n`, "latin1");
      socket.write(chunk);
      room = socket.write("\r\n", "latin1");
      socket.uncork();
    } else {
      if (chunk.length > this.#remaining) {
        this.#fail(new BodyLengthError("request body longer than its Content-Length"));
        return false;
      }
      this.#remaining -= chunk.length;
      room = socket.write(chunk);
    }
    if (!room) socket.once("drain", this.#onDrain);
    return room;
  }

  bodyEnd(): void {
    if (this.#stopped) return;
    if (this.#remaining === undefined) this.#socket.write(LAST_CHUNK, "latin1");
    else if (this.#remaining > 0) {
      this.#fail(new BodyLengthError("request body shorter than its Content-Length"));
      return;
    }
    this.#finish();
    this.#end.sent();
  }

  bodyFailed(error: Error): void {
    if (this.#finish()) this.#end.failed(error);
  }

  /** False when it had finished already. */
  #finish(): boolean {
    if (this.#stopped) return false;
    this.#stopped = true;
    this.#socket.off("drain", this.#onDrain);
    return true;
  }

  #fail(error: Error): void {
    this.stop();
    this.#end.failed(error);
  }

  readonly #onDrain = (): void => {
    if (!this.#stopped) this.#body.resume();
  };
}
