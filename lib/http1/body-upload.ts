import type { Socket } from "node:net";
import type { Readable } from "node:stream";

/** What an upload tells its connection. */
export interface UploadEnd {
  /** The whole body (and, when chunked, its last chunk) was written. */
  sent(): void;
  /** The body's stream failed (its source went away mid-body), or did not match its length: not completed. */
  failed(error: Error): void;
}

/** The body's stream gave more or fewer bytes than the Content-Length the head declared: nothing past it went. */
export class BodyLengthError extends Error {
  override readonly name = "BodyLengthError";
  readonly code = "UPSTREAM_BODY_LENGTH";
}

const LAST_CHUNK = "0\r\n\r\n";

/**
 * A request body streamed to the server's socket (RFC 9112 §6, §7.1): as is when the head declared its
 * Content-Length, else chunked. A declared length is kept to the byte: a chunk that would go past it is not
 * written, and a body that ends short of it fails, since the server would read the next request's bytes as
 * this body's, or wait for bytes that never come. The body is read only while the socket takes more (a full
 * socket pauses it until 'drain'); it is read from the moment the upload starts, once the head is on its way.
 */
export class BodyUpload {
  readonly #socket: Socket;
  readonly #body: Readable;
  /** Bytes the declared Content-Length still allows; undefined when chunked. */
  #remaining: number | undefined;
  readonly #end: UploadEnd;
  #stopped = false;

  constructor(socket: Socket, body: Readable, contentLength: number | undefined, end: UploadEnd) {
    this.#socket = socket;
    this.#body = body;
    this.#remaining = contentLength;
    this.#end = end;
    body.on("data", this.#onData);
    body.once("end", this.#onEnd);
    body.once("error", this.#onError);
  }

  /** The exchange ended first (answered early, failed or cut): the body is no longer wanted. */
  stop(): void {
    if (this.#stopped) return;
    this.#detach();
    this.#body.destroy();
  }

  #detach(): void {
    this.#stopped = true;
    this.#body.off("data", this.#onData);
    this.#body.off("end", this.#onEnd);
    this.#body.off("error", this.#onError);
    this.#socket.off("drain", this.#onDrain);
  }

  #fail(error: Error): void {
    this.stop();
    this.#end.failed(error);
  }

  readonly #onData = (chunk: Buffer): void => {
    if (chunk.length === 0) return;
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
        return;
      }
      this.#remaining -= chunk.length;
      room = socket.write(chunk);
    }
    if (!room) {
      this.#body.pause();
      socket.once("drain", this.#onDrain);
    }
  };

  readonly #onDrain = (): void => {
    if (!this.#stopped) this.#body.resume();
  };

  readonly #onEnd = (): void => {
    if (this.#remaining === undefined) this.#socket.write(LAST_CHUNK, "latin1");
    else if (this.#remaining > 0) {
      this.#fail(new BodyLengthError("request body shorter than its Content-Length"));
      return;
    }
    this.#detach();
    this.#end.sent();
  };

  readonly #onError = (error: Error): void => {
    this.#detach();
    this.#end.failed(error);
  };
}
