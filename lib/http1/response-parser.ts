import { MalformedResponseError, ServerClosedError } from "./client-errors.js";
import { checkTrailerField, parseResponseHead, type ResponseHead } from "./response-head.js";
import { chunkSizeOf } from "./syntax.js";

/**
 * The framing of HTTP/1.1 responses for this client (RFC 9112 §6, §7): where each response ends (a
 * Content-Length, chunked, or the close), reading paused and resumed for back-pressure, bodies handed on as
 * views of the socket's buffers. The head itself is read by response-head.ts.
 */

/** What the parser tells its connection. */
export interface ResponseSink {
  /** A final response head (interim 1xx ones are skipped). */
  onResponseHead(head: ResponseHead): void;
  /** A piece of the body; false asks the parser to pause until resume(). */
  onResponseData(chunk: Buffer): boolean;
  /** The response ended; `reusable` when the connection may carry another request. */
  onResponseEnd(reusable: boolean): void;
  /** The server switched protocols for an upgrade it asked for: `rest` is what followed the head (a copy). */
  onResponseUpgrade?(head: ResponseHead, rest: Buffer): void;
}

/** Largest response head accepted (the common default of HTTP clients, and Node's own). */
export const MAX_RESPONSE_HEAD_BYTES = 16 * 1024;
/** Largest chunk-size line (size and extensions) or trailer field line accepted. */
const MAX_CHUNK_LINE_BYTES = 4 * 1024;
/** The trailer section (RFC 9112 §7.1.2) is bounded as a head is: in bytes, and in fields (each one checked). */
export const MAX_TRAILER_BYTES = 16 * 1024;
export const MAX_TRAILER_FIELDS = 100;
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
/** A step's answer when the read is done with: held, paused past the end, or the response ended. */
const STOP = -1;

export class ResponseParser {
  readonly #sink: ResponseSink;
  #state = IDLE;
  /** Bytes left of the content or of the chunk; in the trailer section, the bytes it may still take. */
  #remaining = 0;
  #trailerFields = 0;
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
  /** The small pieces of chunk data of one read (views of its buffer), handed on together. */
  readonly #gathered: Buffer[] = [];
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
    this.#gathered.length = 0;
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
    let searched = 0;
    if (this.#held !== undefined) {
      data = Buffer.concat([this.#held, data]);
      this.#held = undefined;
      searched = this.#searched;
    }
    let offset = 0;
    while (offset !== STOP && offset < data.length) {
      if (this.#paused) {
        this.#hold(data, offset, 0);
        break;
      }
      offset = this.#step(data, offset, searched);
    }
    this.#flush();
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
      case UNTIL_CLOSE:
        if (!this.#sink.onResponseData(offset === 0 ? data : data.subarray(offset))) this.#paused = true;
        return data.length;
      default:
        throw new MalformedResponseError("bytes while no response was due");
    }
  }

  /** A head: a final one frames the body after it (RFC 9112 §6.3), a 1xx leaves the parser waiting. */
  #headAt(data: Buffer, offset: number, searched: number): number {
    const end = this.#find(data, offset, searched, HEAD_END, MAX_RESPONSE_HEAD_BYTES);
    if (end < 0) return STOP;
    if (end - offset > MAX_RESPONSE_HEAD_BYTES) throw new MalformedResponseError("response head too large");
    const head = parseResponseHead(data.toString("latin1", offset, end + 2), this.#upgrade);
    const after = end + 4;
    if (head === undefined) return after;
    if (head.status === 101) {
      // A protocol switch takes the rest of the bytes.
      this.#state = IDLE;
      this.#sink.onResponseUpgrade?.(head, Buffer.from(data.subarray(after)));
      return STOP;
    }
    this.keepAliveHintMs = head.keepAliveHintMs;
    this.#reusable = head.persistent;
    this.#sink.onResponseHead(head);
    if (this.#noBody || head.status === 204 || head.status === 304 || head.contentLength === 0) {
      this.#end(after === data.length);
      return STOP;
    }
    if (head.chunked) this.#state = CHUNK_SIZE;
    else if (head.contentLength !== undefined) {
      this.#remaining = head.contentLength;
      this.#state = LENGTH;
    } else {
      // RFC 9112 §6.3: a Transfer-Encoding that does not end in chunked, or no framing at all, runs until the close.
      this.#reusable = false;
      this.#state = UNTIL_CLOSE;
    }
    return after;
  }

  /** Content of a known length, or one chunk's data. */
  #contentAt(data: Buffer, offset: number): number {
    const take = Math.min(this.#remaining, data.length - offset);
    const after = offset + take;
    const small = this.#state === CHUNK_DATA && take < SMALL_PIECE_BYTES;
    if (!small) {
      // What was gathered goes first; should it fill the handler, this piece waits for resume.
      this.#flush();
      if (this.#paused) return offset;
    }
    this.#remaining -= take;
    const complete = this.#remaining === 0 && this.#state === LENGTH;
    if (this.#remaining === 0 && this.#state === CHUNK_DATA) this.#state = CHUNK_DATA_END;
    if (small) this.#gathered.push(data.subarray(offset, after));
    else if (!this.#sink.onResponseData(data.subarray(offset, after))) this.#paused = true;
    if (!complete) return after;
    this.#end(after === data.length);
    return STOP;
  }

  #chunkSizeAt(data: Buffer, offset: number, searched: number): number {
    const end = this.#find(data, offset, searched, CRLF, MAX_CHUNK_LINE_BYTES);
    if (end < 0) return STOP;
    const size = end - offset <= MAX_CHUNK_LINE_BYTES ? chunkSizeOf(data, offset, end) : -1;
    if (size < 0) throw new MalformedResponseError("malformed chunk size line");
    this.#state = size === 0 ? TRAILERS : CHUNK_DATA;
    this.#remaining = size === 0 ? MAX_TRAILER_BYTES : size;
    this.#trailerFields = 0;
    return end + 2;
  }

  #chunkEndAt(data: Buffer, offset: number): number {
    if (data.length - offset < 2) {
      this.#hold(data, offset, 0);
      return STOP;
    }
    if (data[offset] !== 0x0d || data[offset + 1] !== 0x0a) {
      throw new MalformedResponseError("chunk data longer than its size");
    }
    this.#state = CHUNK_SIZE;
    return offset + 2;
  }

  #trailerAt(data: Buffer, offset: number, searched: number): number {
    const end = this.#find(data, offset, searched, CRLF, MAX_CHUNK_LINE_BYTES);
    if (end < 0) return STOP;
    if (end === offset) {
      this.#end(end + 2 === data.length);
      return STOP;
    }
    this.#remaining -= end + 2 - offset;
    if (this.#remaining < 0 || ++this.#trailerFields > MAX_TRAILER_FIELDS) {
      throw new MalformedResponseError("trailer section too large");
    }
    checkTrailerField(data.toString("latin1", offset, end + 2));
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

  /** Where `mark` (a head's end or a line's) is from `offset` on; else -1, the bytes held (`limit` at most). */
  #find(data: Buffer, offset: number, searched: number, mark: Buffer, limit: number): number {
    const end = data.indexOf(mark, Math.max(offset, searched - mark.length + 1));
    if (end >= 0) return end;
    if (data.length - offset > limit)
      throw new MalformedResponseError("response head or chunk line too long");
    this.#hold(data, offset, data.length - offset);
    return -1;
  }

  /** Keeps the bytes from `offset` on until more come; `searched`: how many of them were searched in vain. */
  #hold(data: Buffer, offset: number, searched: number): void {
    this.#held = Buffer.from(offset === 0 ? data : data.subarray(offset));
    this.#searched = searched;
  }

  #flush(): void {
    const pieces = this.#gathered;
    if (pieces.length === 0) return;
    const chunk = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
    pieces.length = 0;
    if (!this.#sink.onResponseData(chunk)) this.#paused = true;
  }

  #end(lastBytes: boolean): void {
    this.#flush();
    this.#state = IDLE;
    this.#held = undefined;
    this.#sink.onResponseEnd(this.#reusable && lastBytes && !this.#closed);
  }
}
