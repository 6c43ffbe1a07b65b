import type { Socket } from "node:net";
import type { Readable } from "node:stream";

/** What an upload tells its connection. */
export interface UploadEnd {
  /** The whole body (and, when chunked, its last chunk) was written. */
  sent(): void;
  /** The body's stream failed (the client went away mid-body): the request cannot be completed. */
  failed(error: Error): void;
}

const LAST_CHUNK = "0\r\n\r\n";

/**
 * A request body streamed to the server's socket (RFC 9112 §6, §7.1): as is when the request states its
 * Content-Length, else chunked. The body is read only while the socket takes more (a full socket pauses it
 * until 'drain'); it is read from the moment the upload starts, which is once the head is on its way.
 */
export class BodyUpload {
  readonly #socket: Socket;
  readonly #body: Readable;
  readonly #chunked: boolean;
  readonly #end: UploadEnd;
  #stopped = false;

  constructor(socket: Socket, body: Readable, chunked: boolean, end: UploadEnd) {
    this.#socket = socket;
    this.#body = body;
    this.#chunked = chunked;
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

  readonly #onData = (chunk: Buffer): void => {
    if (chunk.length === 0) return;
    const socket = this.#socket;
    let room: boolean;
    if (this.#chunked) {
      socket.cork();
      socket.write(`${chunk.length.toString(16)}\r\n`, "latin1");
      socket.write(chunk);
      room = socket.write("\r\n", "latin1");
      socket.uncork();
    } else room = socket.write(chunk);
    if (!room) {
      this.#body.pause();
      socket.once("drain", this.#onDrain);
    }
  };

  readonly #onDrain = (): void => {
    if (!this.#stopped) this.#body.resume();
  };

  readonly #onEnd = (): void => {
    if (this.#chunked) this.#socket.write(LAST_CHUNK, "latin1");
    this.#detach();
    this.#end.sent();
  };

  readonly #onError = (error: Error): void => {
    this.#detach();
    this.#end.failed(error);
  };
}
