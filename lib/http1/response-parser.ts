import { chunkSizeOf } from "./chunk-line.js";
import { ServerClosedError } from "./client-errors.js";
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
/**
 * Chunk data in pieces smaller than this is gathered across the chunks of one read and handed on at once: a
 * body in 1-byte chunks would otherwise cost a write to the client per byte, thousands per read.
 */
const SMALL_PIECE_BYTES = 1024;

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
  readonly #gathered: Buffer[] = [];
  #gatheredBytes = 0;
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
    if (this.#gatheredBytes > 0) {
      this.#gathered.length = 0;
      this.#gatheredBytes = 0;
    }
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
    if (this.#gatheredBytes > 0) this.#flush();
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
      switch (this.#state) {
        case HEAD: {
          const end = data.indexOf(HEAD_END, Math.max(offset, searched - 3));
          if (end < 0) {
            this.#hold(data, offset, MAX_RESPONSE_HEAD_BYTES);
            return;
          }
          if (end - offset > MAX_RESPONSE_HEAD_BYTES)
            throw new MalformedResponseError("response head too large");
          const head = data.toString("latin1", offset, end + 2);
          offset = end + 4;
          if (this.#head(head, data, offset)) {
            this.#end(offset === data.length);
            return;
          }
          // A protocol switch took the rest of the bytes.
          if (!this.awaiting) return;
          break;
        }
        case LENGTH:
        case CHUNK_DATA: {
          const take = Math.min(this.#remaining, data.length - offset);
          if (this.#state === CHUNK_DATA && take < SMALL_PIECE_BYTES) {
            this.#gather(data.subarray(offset, offset + take));
            offset += take;
            this.#remaining -= take;
            if (this.#remaining === 0) this.#state = CHUNK_DATA_END;
            break;
          }
          // What was gathered goes first; should it fill the handler, this piece waits for resume.
          if (this.#gatheredBytes > 0) {
            this.#flush();
            if (this.#paused) break;
          }
          const chunk = data.subarray(offset, offset + take);
          offset += take;
          this.#remaining -= take;
          const complete = this.#remaining === 0 && this.#state === LENGTH;
          if (this.#remaining === 0 && this.#state === CHUNK_DATA) this.#state = CHUNK_DATA_END;
          if (!this.#sink.onResponseData(chunk)) this.#paused = true;
          if (complete) {
            this.#end(offset === data.length);
            return;
          }
          break;
        }
        case CHUNK_SIZE: {
          const end = this.#lineEnd(data, offset, searched);
          if (end < 0) return;
          const size = end - offset <= MAX_CHUNK_LINE_BYTES ? chunkSizeOf(data, offset, end) : -1;
          if (size < 0) throw new MalformedResponseError("malformed chunk size line");
          this.#remaining = size;
          this.#state = size === 0 ? TRAILERS : CHUNK_DATA;
          if (size === 0) this.#trailers.start();
          offset = end + 2;
          break;
        }
        case CHUNK_DATA_END: {
          if (data.length - offset < 2) {
            this.#hold(data, offset, 2);
            return;
          }
          if (data[offset] !== 0x0d || data[offset + 1] !== 0x0a) {
            throw new MalformedResponseError("chunk data longer than its size");
          }
          offset += 2;
          this.#state = CHUNK_SIZE;
          break;
        }
        case TRAILERS: {
          const end = this.#lineEnd(data, offset, searched);
          if (end < 0) return;
          const lineBytes = end + 2 - offset;
          if (lineBytes === 2) {
            this.#end(end + 2 === data.length);
            return;
          }
          this.#trailers.read(data, offset, lineBytes);
          offset = end + 2;
          break;
        }
        case UNTIL_CLOSE: {
          const chunk = offset === 0 ? data : data.subarray(offset);
          offset = data.length;
          if (!this.#sink.onResponseData(chunk)) this.#paused = true;
          break;
        }
        default:
          throw new MalformedResponseError("bytes while no response was due");
      }
    }
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

  #gather(piece: Buffer): void {
    this.#gathered.push(piece);
    this.#gatheredBytes += piece.length;
  }

  #flush(): void {
    const gathered = this.#gathered;
    if (gathered.length === 0) return;
    const chunk =
      gathered.length === 1 ? (gathered[0] as Buffer) : Buffer.concat(gathered, this.#gatheredBytes);
    gathered.length = 0;
    this.#gatheredBytes = 0;
    if (!this.#sink.onResponseData(chunk)) this.#paused = true;
  }

  #end(lastBytes: boolean): void {
    if (this.#gatheredBytes > 0) this.#flush();
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
