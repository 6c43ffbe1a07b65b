import type { Readable } from "node:stream";
import type { BodySink, BodySource } from "../../lib/http-exchange.js";

/**
 * A Readable as a request body for the HTTP/1.1 client (lib/http-exchange.ts BodySource): read while the sink
 * takes more, destroyed when the request stops it, never sent twice (no replay).
 */
export class ReadableBody implements BodySource {
  readonly #readable: Readable;
  #sink: BodySink | undefined;

  constructor(readable: Readable) {
    this.#readable = readable;
  }

  start(sink: BodySink): void {
    this.#sink = sink;
    this.#readable.on("data", this.#onData);
    this.#readable.once("end", this.#onEnd);
    this.#readable.once("error", this.#onError);
  }

  resume(): void {
    if (this.#sink) this.#readable.resume();
  }

  stop(): void {
    if (!this.#detach()) return;
    this.#readable.destroy();
  }

  #detach(): boolean {
    if (this.#sink === undefined) return false;
    this.#sink = undefined;
    this.#readable.off("data", this.#onData);
    this.#readable.off("end", this.#onEnd);
    this.#readable.off("error", this.#onError);
    return true;
  }

  readonly #onData = (chunk: Buffer | string): void => {
    const room = this.#sink?.bodyData(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    if (room === false) this.#readable.pause();
  };

  readonly #onEnd = (): void => {
    const sink = this.#sink;
    this.#detach();
    sink?.bodyEnd();
  };

  readonly #onError = (error: Error): void => {
    const sink = this.#sink;
    this.#detach();
    sink?.bodyFailed(error);
  };
}
