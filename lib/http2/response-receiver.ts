import type { StreamListener } from "./api.js";
import type { ConnectionLink } from "./connection-link.js";
import { ErrorCode, windowUpdateFrame } from "./frames.js";

/**
 * The receiving half of a client stream: the response head, its DATA and trailers (held in order while paused),
 * and the stream's receive window, credited as the listener takes the DATA (RFC 9113 §6.9).
 */
export abstract class ResponseReceiver {
  protected streamId: number | undefined;
  protected closed = false;
  /** END_STREAM came (what came before it may still be held while paused). */
  protected remoteEnded = false;
  /** END_STREAM came and everything before it was delivered. */
  protected remoteDone = false;
  readonly #bodyless: boolean;
  #receiveWindow = 0;
  #unacknowledged = 0;
  #headSeen = false;
  #expected = NO_LENGTH;
  #received = 0;
  #paused = false;
  /** DATA payloads and trailers (a list) waiting while paused, bounded by the stream window we granted. */
  #held: (Buffer | string[])[] | undefined;
  #delivering = false;

  protected constructor(
    protected readonly link: ConnectionLink,
    protected readonly listener: StreamListener,
    bodyless: boolean,
  ) {
    this.#bodyless = bodyless;
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    if (!this.#delivering) this.#deliverHeld();
  }

  /** fields: null when the decoded list is over our SETTINGS_MAX_HEADER_LIST_SIZE. */
  receiveHeaders(fields: string[] | null, endStream: boolean): void {
    if (fields === null) {
      // §10.5.1: a client may discard a response it cannot process; the block was decoded all the same.
      this.fail(ErrorCode.ENHANCE_YOUR_CALM, "a field section over our SETTINGS_MAX_HEADER_LIST_SIZE");
    } else if (this.remoteEnded) {
      this.fail(ErrorCode.STREAM_CLOSED, "HEADERS after END_STREAM (RFC 9113 §5.1)");
    } else if (this.#headSeen) {
      this.#receiveTrailers(fields, endStream);
    } else {
      this.#receiveHead(fields, endStream);
    }
  }

  receiveData(payload: Buffer, frameLength: number, endStream: boolean): void {
    if (this.remoteEnded) {
      this.fail(ErrorCode.STREAM_CLOSED, "DATA after END_STREAM (RFC 9113 §5.1)");
      return;
    }
    if (!this.#headSeen) {
      this.fail(ErrorCode.PROTOCOL_ERROR, "DATA before the response head (RFC 9113 §8.1)");
      return;
    }
    this.#receiveWindow -= frameLength;
    if (this.#receiveWindow < 0) {
      this.fail(ErrorCode.FLOW_CONTROL_ERROR, "DATA beyond the stream window (RFC 9113 §6.9.1)");
      return;
    }
    this.#received += payload.length;
    const expected = this.#expected;
    if (expected >= 0 && (this.#received > expected || (endStream && this.#received !== expected))) {
      this.fail(ErrorCode.PROTOCOL_ERROR, "DATA disagrees with content-length (RFC 9113 §8.1.1)");
      return;
    }
    this.remoteEnded = endStream;
    if (this.#paused || this.#held !== undefined) {
      this.#held ??= [];
      if (payload.length > 0) this.#held.push(payload);
      this.#credit(frameLength - payload.length);
      return;
    }
    if (payload.length > 0) this.listener.onData(payload);
    if (this.closed) return;
    if (endStream) this.#finishRemote();
    else this.#credit(frameLength);
  }

  protected openReceiving(id: number): void {
    this.streamId = id;
    this.#receiveWindow = this.link.streamWindow;
  }

  protected dropReceived(): void {
    this.#held = undefined;
  }

  /** RST_STREAM(code) and onClose. */
  protected abstract fail(code: number, message: string): void;

  /** The response ended and was delivered. */
  protected abstract remoteFinished(): void;

  #receiveHead(fields: string[], endStream: boolean): void {
    const status = takeStatus(fields);
    if (status === MALFORMED || status === 101 || (status < 200 && endStream)) {
      this.fail(ErrorCode.PROTOCOL_ERROR, "malformed response head (RFC 9113 §8.3.2)");
      return;
    }
    if (status < 200) return;
    const expected = this.#bodyless || status === 204 || status === 304 ? 0 : declaredLength(fields);
    if (expected === BAD_LENGTH || (endStream && expected > 0)) {
      this.fail(ErrorCode.PROTOCOL_ERROR, "content-length disagrees with the response (RFC 9113 §8.1.1)");
      return;
    }
    this.#expected = expected;
    this.#headSeen = true;
    this.remoteEnded = endStream;
    this.listener.onHead(status, fields, endStream);
    if (endStream && !this.closed) this.#finishRemote();
  }

  #receiveTrailers(fields: string[], endStream: boolean): void {
    if (!endStream || !regularFields(fields, 0)) {
      this.fail(
        ErrorCode.PROTOCOL_ERROR,
        "trailers without END_STREAM or with a pseudo-header or malformed field (RFC 9113 §8.1)",
      );
      return;
    }
    if (this.#expected >= 0 && this.#received !== this.#expected) {
      this.fail(ErrorCode.PROTOCOL_ERROR, "DATA disagrees with content-length (RFC 9113 §8.1.1)");
      return;
    }
    this.remoteEnded = true;
    if (this.#paused || this.#held !== undefined) {
      this.#held ??= [];
      this.#held.push(fields);
      return;
    }
    this.listener.onTrailers(fields);
    if (!this.closed) this.#finishRemote();
  }

  #deliverHeld(): void {
    this.#delivering = true;
    const held = this.#held;
    while (held !== undefined && held.length > 0 && !this.#paused && !this.closed) {
      const item = held.shift() as Buffer | string[];
      if (Array.isArray(item)) this.listener.onTrailers(item);
      else {
        this.listener.onData(item);
        this.#credit(item.length);
      }
    }
    this.#delivering = false;
    if (this.#paused || this.closed || held === undefined) return;
    this.#held = undefined;
    if (this.remoteEnded) this.#finishRemote();
  }

  /** §6.9: WINDOW_UPDATE once half the window is consumed, not per frame; none once the peer is done sending. */
  #credit(octets: number): void {
    this.#unacknowledged += octets;
    if (this.remoteEnded || this.#unacknowledged < this.link.streamWindow >>> 1) return;
    this.link.write(windowUpdateFrame(this.streamId as number, this.#unacknowledged));
    this.#receiveWindow += this.#unacknowledged;
    this.#unacknowledged = 0;
  }

  #finishRemote(): void {
    this.remoteDone = true;
    this.remoteFinished();
  }
}

/** §8.2.2: connection-specific fields make a message malformed. */
const CONNECTION_SPECIFIC = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

/** §8.2.1: a name is lowercase token characters; a value has no NUL, CR or LF and no whitespace at either end. */
const INVALID_NAME = /[^a-z0-9!#$%&'*+\-.^_`|~]/;
const INVALID_VALUE = /[\0\r\n]|^[\t ]|[\t ]$/;
/** §8.3.2: three digits; RFC 9110 §15: 100 to 599. */
const STATUS = /^[1-5][0-9]{2}$/;

const MALFORMED = -1;
const NO_LENGTH = -1;
const BAD_LENGTH = -2;

/**
 * The status of a response head and the fields without it: :status must come first (§8.3: pseudo-header fields
 * precede the others), once, as three digits; a response has no other pseudo-header field. MALFORMED otherwise.
 * Removes :status from `fields`.
 */
function takeStatus(fields: string[]): number {
  const status = fields[1] as string;
  if (fields[0] !== ":status" || !STATUS.test(status) || !regularFields(fields, 2)) return MALFORMED;
  fields.copyWithin(0, 2);
  fields.length -= 2;
  return Number(status);
}

/**
 * True when the fields from `from` on are well formed (§8.2.1) and hold no pseudo-header field (§8.3) and no
 * connection-specific one: what is passed on to an HTTP/1.1 client cannot split its message.
 */
function regularFields(fields: readonly string[], from: number): boolean {
  for (let i = from; i < fields.length; i += 2) {
    const name = fields[i] as string;
    if (name.length === 0 || INVALID_NAME.test(name) || CONNECTION_SPECIFIC.has(name)) return false;
    if (INVALID_VALUE.test(fields[i + 1] as string)) return false;
  }
  return true;
}

/**
 * §8.1.1: the content-length the DATA must add up to, NO_LENGTH when absent, BAD_LENGTH when it is not a
 * number or its values disagree.
 */
function declaredLength(fields: readonly string[]): number {
  let length = NO_LENGTH;
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] !== "content-length") continue;
    const value = fields[i + 1] as string;
    if (!/^[0-9]{1,15}$/.test(value)) return BAD_LENGTH;
    const parsed = Number(value);
    if (length !== NO_LENGTH && parsed !== length) return BAD_LENGTH;
    length = parsed;
  }
  return length;
}
