import type { BodyListener } from "./api.js";
import type { ConnectionLink } from "./connection-link.js";
import { BAD_LENGTH, MALFORMED, NO_LENGTH, regularFields } from "./field-rules.js";
import { ErrorCode, windowUpdateFrame } from "./frames.js";

/** What acceptHead() returns for a head to skip (an informational response, §8.1). */
export const INFORMATIONAL = -3;

/**
 * The receiving half of a stream, either role: the peer's head (the role checks and delivers it), its DATA and
 * trailers (held in order while paused), and the stream's receive window, credited as the listener takes the
 * DATA (RFC 9113 §6.9).
 */
export abstract class MessageReceiver<Listener extends BodyListener> {
  protected streamId: number | undefined;
  protected closed = false;
  /** END_STREAM came (what came before it may still be held while paused). */
  protected remoteEnded = false;
  /** END_STREAM came and everything before it was delivered. */
  protected remoteDone = false;
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
    protected listener: Listener,
  ) {}

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
      this.fail(ErrorCode.PROTOCOL_ERROR, "DATA before the head (RFC 9113 §8.1)");
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
    // A payload is a view of the read that brought it: one that is a small part of its read is copied, so a
    // few bytes held or kept never pin a whole read (a peer can pad its reads with frames we skip).
    if (payload.length * 4 < payload.buffer.byteLength) payload = Buffer.from(payload);
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

  /** The peer's message ended and was delivered. */
  protected abstract remoteFinished(): void;

  /**
   * Checks the head and takes its pseudo-header fields out of `fields`: the content-length its DATA must add up
   * to (NO_LENGTH when none, BAD_LENGTH when it cannot be read), MALFORMED, or INFORMATIONAL to skip it.
   */
  protected abstract acceptHead(fields: string[], endStream: boolean): number;

  /** The head passed acceptHead(): hand it on. */
  protected abstract deliverHead(fields: string[], endStream: boolean): void;

  #receiveHead(fields: string[], endStream: boolean): void {
    const expected = this.acceptHead(fields, endStream);
    if (expected === INFORMATIONAL) return;
    if (expected === MALFORMED) {
      this.fail(ErrorCode.PROTOCOL_ERROR, "a malformed head (RFC 9113 §8.3)");
      return;
    }
    if (expected === BAD_LENGTH || (endStream && expected > 0)) {
      this.fail(ErrorCode.PROTOCOL_ERROR, "content-length disagrees with the message (RFC 9113 §8.1.1)");
      return;
    }
    this.#expected = expected;
    this.#headSeen = true;
    this.remoteEnded = endStream;
    this.deliverHead(fields, endStream);
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
