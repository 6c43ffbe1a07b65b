import { chunkSizeOf } from "./chunk-line.js";
import { ServerClosedError } from "./client-errors.js";
import { GatheredPieces, SMALL_PIECE_BYTES } from "./gathered-pieces.js";
import { MalformedResponseError, parseResponseHead } from "./response-head.js";
import type { ResponseSink } from "./response-sink.js";
import { TrailerSection } from "./trailer-section.js";

export type { ResponseSink } from "./response-sink.js";

/**
 * The framing of HTTP/1.1 responses for this client (RFC 9112 §6, §7): where each response ends (a
 * Content-Length, chunked, or the close), reading paused and resumed for back-pressure, bodies handed on as
 * views of the socket's buffers. The head itself is read by response-head.ts.
 */

/** Largest response head accepted (the common default of HTTP clients, and Node's own). */
export const MAX_RESPONSE_HEAD_BYTES = 16 * 1024;
/** Largest chunk-size line (size and extensions) or trailer field line accepted. */
const MAX_CHUNK_LINE_BYTES = 4 * 1024;

const HEAD_END = Buffer.from("\r\n\r\n", "latin1");
const CRLF = Buffer.from("\r\n", "latin1");

const HEAD = 0;
const LENGTH = 1;
const CHUNK_SIZE = 2;
const CHUNK_DATA = 3;
const CHUNK_DATA_END = 4;
const TRAILERS = 5;
const UNTIL_CLOSE = 6;
const IDLE = 7;
/** A step's answer when the read is done with: held, paused past the end, or the response ended. */
const STOP = -1;

export class ResponseParser {
  readonly #sink: ResponseSink;
  #state = IDLE;
  #remaining = 0;
  #reusable = false;
  #noBody = false;
  #upgrade = false;
  #paused = false;
  /** The server closed its side while the parser was paused: the end is due once the held bytes are read. */
  #closed = false;
  /** Bytes received but not parsed yet: a head or line cut across reads, or what came while paused. */
  #held: Buffer | undefined;
  /** Held bytes already searched in vain for the end of their head or line (none twice, however they come). */
  #searched = 0;
  readonly #trailers = new TrailerSection();
  readonly #gathered = new GatheredPieces();
  /** The last response's Keep-Alive `timeout` hint, in ms (response-head.ts). */
  keepAliveHintMs: number | undefined;

  constructor(sink: ResponseSink) {
    this.#sink = sink;
  }

  /** A request went out: its response is next. `noBody` for HEAD (§6.3); `upgrade`: a 101 switches protocols. */
  expect(noBody: boolean, upgrade = false): void {
    this.#state = HEAD;
    this.#noBody = noBody;
    this.#upgrade = upgrade;
    this.#paused = false;
    this.#closed = false;
    this.#held = undefined;
    if (this.#gathered.bytes > 0) this.#gathered.clear();
    this.keepAliveHintMs = undefined;
  }

  /** A response is due or under way. */
  get awaiting(): boolean {
    return this.#state !== IDLE;
  }

  /** A response is due and its final head has not come. */
  get awaitingHead(): boolean {
    return this.#state === HEAD;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /**
   * Bytes from the socket; throws MalformedResponseError. The response's end is the last thing it tells the
   * sink: bytes past it are never parsed (they make the connection unreusable instead), so the sink may hand the
   * connection to the next request from onResponseEnd. `data` may be overwritten once this returns (the
   * connection reuses its read buffer): what the parser keeps of it, it copies.
   */
  execute(data: Buffer): void {
    this.#parse(data);
    if (this.#gathered.bytes > 0) this.#flush();
  }

  #parse(data: Buffer): void {
    let searched = 0;
    if (this.#held !== undefined) {
      data = Buffer.concat([this.#held, data]);
      this.#held = undefined;
      searched = this.#searched;
    }
    let offset = 0;
    while (offset < data.length) {
      if (this.#paused) {
        this.#held = Buffer.from(data.subarray(offset));
        this.#searched = 0;
        return;
      }
      offset = this.#step(data, offset, searched);
      if (offset === STOP) return;
    }
  }

  /** Reads what the state expects at `offset`: the offset after it, or STOP when this read is done with. */
  #step(data: Buffer, offset: number, searched: number): number {
    switch (this.#state) {
      case HEAD:
        return this.#headAt(data, offset, searched);
      case LENGTH:
      case CHUNK_DATA:
        return this.#contentAt(data, offset);
      case CHUNK_SIZE:
        return this.#chunkSizeAt(data, offset, searched);
      case CHUNK_DATA_END:
        return this.#chunkEndAt(data, offset);
      case TRAILERS:
        return this.#trailerAt(data, offset, searched);
      case UNTIL_CLOSE: {
        if (!this.#sink.onResponseData(offset === 0 ? data : data.subarray(offset))) this.#paused = true;
        return data.length;
      }
      default:
        throw new MalformedResponseError("bytes while no response was due");
    }
  }

  #headAt(data: Buffer, offset: number, searched: number): number {
    const end = data.indexOf(HEAD_END, Math.max(offset, searched - 3));
    if (end < 0) {
      this.#hold(data, offset, MAX_RESPONSE_HEAD_BYTES);
      return STOP;
    }
    if (end - offset > MAX_RESPONSE_HEAD_BYTES) throw new MalformedResponseError("response head too large");
    const head = data.toString("latin1", offset, end + 2);
    const after = end + 4;
    if (this.#head(head, data, after)) {
      this.#end(after === data.length);
      return STOP;
    }
    // A protocol switch took the rest of the bytes.
    return this.awaiting ? after : STOP;
  }

  /** Content of a known length, or one chunk's data. */
  #contentAt(data: Buffer, offset: number): number {
    const take = Math.min(this.#remaining, data.length - offset);
    const after = offset + take;
    if (this.#state === CHUNK_DATA && take < SMALL_PIECE_BYTES) {
      this.#gathered.add(data.subarray(offset, after));
      this.#remaining -= take;
      if (this.#remaining === 0) this.#state = CHUNK_DATA_END;
      return after;
    }
    // What was gathered goes first; should it fill the handler, this piece waits for resume.
    if (this.#gathered.bytes > 0) {
      this.#flush();
      if (this.#paused) return offset;
    }
    this.#remaining -= take;
    const complete = this.#remaining === 0 && this.#state === LENGTH;
    if (this.#remaining === 0 && this.#state === CHUNK_DATA) this.#state = CHUNK_DATA_END;
    if (!this.#sink.onResponseData(data.subarray(offset, after))) this.#paused = true;
    if (!complete) return after;
    this.#end(after === data.length);
    return STOP;
  }

  #chunkSizeAt(data: Buffer, offset: number, searched: number): number {
    const end = this.#lineEnd(data, offset, searched);
    if (end < 0) return STOP;
    const size = end - offset <= MAX_CHUNK_LINE_BYTES ? chunkSizeOf(data, offset, end) : -1;
    if (size < 0) throw new MalformedResponseError("malformed chunk size line");
    this.#remaining = size;
    this.#state = size === 0 ? TRAILERS : CHUNK_DATA;
    if (size === 0) this.#trailers.start();
    return end + 2;
  }

  #chunkEndAt(data: Buffer, offset: number): number {
    if (data.length - offset < 2) {
      this.#hold(data, offset, 2);
      return STOP;
    }
    if (data[offset] !== 0x0d || data[offset + 1] !== 0x0a) {
      throw new MalformedResponseError("chunk data longer than its size");
    }
    this.#state = CHUNK_SIZE;
    return offset + 2;
  }

  #trailerAt(data: Buffer, offset: number, searched: number): number {
    const end = this.#lineEnd(data, offset, searched);
    if (end < 0) return STOP;
    const lineBytes = end + 2 - offset;
    if (lineBytes === 2) {
      this.#end(end + 2 === data.length);
      return STOP;
    }
    this.#trailers.read(data, offset, lineBytes);
    return end + 2;
  }

  /** Goes on with what came while paused. */
  resume(): void {
    this.#paused = false;
    const held = this.#held;
    if (held !== undefined && this.#state !== HEAD) {
      this.#held = undefined;
      this.execute(held);
    }
    if (this.#closed && !this.#paused) this.closed();
  }

  /** The server closed its side: ends a close-delimited body; throws when a response was cut short. */
  closed(): void {
    this.#closed = true;
    if (this.#paused || this.#state === IDLE) return;
    if (this.#state === HEAD && this.#held === undefined) {
      throw new ServerClosedError("backend closed the connection before answering");
    }
    if (this.#state !== UNTIL_CLOSE) {
      throw new MalformedResponseError("backend closed the connection mid-response");
    }
    this.#end(false);
  }

  /** Where the line at `offset` ends (its CR), or -1 with the rest held until more bytes come. */
  #lineEnd(data: Buffer, offset: number, searched: number): number {
    const end = data.indexOf(CRLF, Math.max(offset, searched - 1));
    if (end < 0) this.#hold(data, offset, MAX_CHUNK_LINE_BYTES);
    return end;
  }

  #hold(data: Buffer, offset: number, limit: number): void {
    if (data.length - offset > limit)
      throw new MalformedResponseError("response head or chunk line too long");
    this.#held = Buffer.from(offset === 0 ? data : data.subarray(offset));
    this.#searched = data.length - offset;
  }

  #flush(): void {
    const chunk = this.#gathered.take();
    if (chunk !== undefined && !this.#sink.onResponseData(chunk)) this.#paused = true;
  }

  #end(lastBytes: boolean): void {
    if (this.#gathered.bytes > 0) this.#flush();
    this.#state = IDLE;
    this.#held = undefined;
    this.#sink.onResponseEnd(this.#reusable && lastBytes && !this.#closed);
  }

  /**
   * True when the response is complete with its head (no content); a 1xx leaves the parser waiting, and a 101
   * to an upgrade hands on the bytes after it (from `offset` in `data`).
   */
  #head(text: string, data: Buffer, offset: number): boolean {
    const head = parseResponseHead(text, this.#upgrade);
    if (head === undefined) return false;
    if (head.status === 101) {
      this.#state = IDLE;
      this.#sink.onResponseUpgrade?.(head, Buffer.from(data.subarray(offset)));
      return false;
    }
    this.keepAliveHintMs = head.keepAliveHintMs;
    this.#reusable = head.persistent;
    this.#sink.onResponseHead(head);
    if (this.#noBody || head.status === 204 || head.status === 304) return true;
    if (head.chunked) {
      this.#state = CHUNK_SIZE;
      return false;
    }
    // RFC 9112 §6.3: a Transfer-Encoding that does not end in chunked, or no framing at all, runs until the close.
    if (head.transferCodings !== undefined || head.contentLength === undefined) {
      this.#reusable = false;
      this.#state = UNTIL_CLOSE;
      return false;
    }
    this.#remaining = head.contentLength;
    this.#state = LENGTH;
    return this.#remaining === 0;
  }
}
