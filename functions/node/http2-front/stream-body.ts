import { EventEmitter } from "node:events";
import type { ServerStream } from "../../../lib/http2/server-session.js";

/**
 * An HTTP/2 request's content as the exchange reads a client's body (request-body.ts): 'data', 'end', and
 * 'close' without 'end' when the client reset the stream or left. The stream holds what comes while paused,
 * within the window it granted (RFC 9113 §6.9), so nothing is read before an attempt asks for it.
 */
export class StreamBody extends EventEmitter {
  readableEnded = false;

  constructor(readonly stream: ServerStream) {
    super();
  }

  pause(): this {
    this.stream.pause();
    return this;
  }

  resume(): this {
    this.stream.resume();
    return this;
  }

  data(chunk: Buffer): void {
    this.emit("data", chunk);
  }

  ended(): void {
    this.readableEnded = true;
    this.emit("end");
  }

  closed(): void {
    this.emit("close");
  }
}

/**
 * The content of every request whose HEADERS ended its stream (§8.1) yet declared a length of 0: it ends at each
 * resume, as an empty Readable does, for whoever listens then. One for all such requests: it holds nothing.
 */
class EndedBody extends EventEmitter {
  readonly readableEnded = true;

  pause(): this {
    return this;
  }

  resume(): this {
    process.nextTick(() => this.emit("end"));
    return this;
  }
}

export const ENDED_BODY = new EndedBody().setMaxListeners(0);
