import type { ExchangeHandler } from "../http-exchange.js";

/**
 * What one read from the server may bring: twice libuv's own read size, so that a 64 KiB body and its head come
 * in one read, go out in one writev, instead of two each.
 */
const READ_BUFFER_BYTES = 128 * 1024;

/**
 * Where a connection's reads from the server go (net's `onread`): one buffer, read into again and again while
 * nothing holds on to what the last read brought. The parser copies what it keeps of a read; the handler given
 * chunks of it says whether it still holds them (a write the kernel did not take yet; a handler that cannot say
 * is given copies), and if it does, the next read goes to a fresh buffer. Node's 'data' events would allocate a
 * 64 KiB buffer per read instead: under a stream of large bodies that external memory, dropped as fast as it
 * comes, is what sets off V8's full collections (a mark-compact every few hundred responses). The cost: an open
 * connection keeps its buffer (the pages its reads touched stay resident) until it closes, idle ones after
 * keepAliveTimeoutMs.
 */
export class ReadBuffer {
  #buffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
  /** A chunk of the last read may still be held. */
  #held = false;
  /** The handler given chunks of the read under way. */
  #taker: ExchangeHandler | undefined;

  /** net's `onread` option: reads go here, and `callback` is told how many bytes each brought. */
  onread(callback: (bytes: number) => boolean): {
    buffer: () => Buffer;
    callback: (bytes: number) => boolean;
  } {
    return { buffer: this.#next, callback };
  }

  /** Where the next read goes. */
  readonly #next = (): Buffer => {
    if (this.#held) {
      this.#held = false;
      this.#buffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
    }
    return this.#buffer;
  };

  /** The bytes the read under way brought: valid until done(), and after only if a handler holds them. */
  bytes(count: number): Buffer {
    return count === this.#buffer.length ? this.#buffer : this.#buffer.subarray(0, count);
  }

  /** `handler` was given a chunk of the read under way. */
  gave(handler: ExchangeHandler): void {
    this.#taker = handler;
  }

  /** The read was parsed and handed on: its buffer is read into again unless its chunks may still be held. */
  done(): void {
    const taker = this.#taker;
    if (taker === undefined) return;
    this.#taker = undefined;
    if (taker.holdsChunk?.() !== false) this.#held = true;
  }
}
