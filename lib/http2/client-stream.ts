import type { ClientStream, StreamListener } from "./api.js";
import type { ConnectionLink } from "./connection-link.js";
import { declaredLength, MALFORMED, takeStatus } from "./field-rules.js";
import { ErrorCode } from "./frames.js";
import { INFORMATIONAL } from "./message-receiver.js";
import { Http2StreamBase } from "./stream-base.js";

const NO_FIELDS: readonly string[] = [];

/**
 * A ClientStream as its session drives it: the request's HEADERS once the session gives it an identifier
 * (§5.1.2), its response through the listener. Its methods past ClientStream's are the session's.
 */
export class Http2Stream extends Http2StreamBase<StreamListener> implements ClientStream {
  #fields: readonly string[];
  readonly #bodyless: boolean;
  #refused = false;
  #status = 0;

  constructor(link: ConnectionLink, fields: readonly string[], endStream: boolean, listener: StreamListener) {
    super(link, listener);
    this.#fields = fields;
    // request()'s fields open with :method; a response to HEAD has no content (RFC 9110 §9.3.2).
    this.#bodyless = fields[1] === "HEAD";
    this.endRequested = endStream;
  }

  /** HEADERS, then any DATA written while the stream was queued (§5.1.2). */
  start(id: number): void {
    this.open(id);
    const fields = this.#fields;
    this.#fields = NO_FIELDS;
    this.sendHead(fields);
  }

  /** A GOAWAY's last-stream-id is below ours (§6.8): the peer did not and will not act on it. */
  refuse(): void {
    this.#refused = true;
  }

  /**
   * §8.7: REFUSED_STREAM means unprocessed. NO_ERROR after the whole response came only stops our sending
   * (§8.1): the response, maybe still held while paused, completes the stream.
   */
  override receiveReset(code: number): void {
    if (code === ErrorCode.NO_ERROR && this.remoteEnded) {
      this.dropSending();
      if (this.remoteDone) this.terminate(ErrorCode.NO_ERROR, false, undefined);
      return;
    }
    super.receiveReset(code);
  }

  override terminate(code: number, unprocessed: boolean, error: Error | undefined): void {
    super.terminate(code, unprocessed || this.#refused, error);
  }

  /** §8.3.2: :status first; 101 has no place in HTTP/2 and an informational head never ends the stream. */
  protected override acceptHead(fields: string[], endStream: boolean): number {
    const status = takeStatus(fields);
    if (status === MALFORMED || status === 101 || (status < 200 && endStream)) return MALFORMED;
    if (status < 200) return INFORMATIONAL;
    this.#status = status;
    return this.#bodyless || status === 204 || status === 304 ? 0 : declaredLength(fields);
  }

  protected override deliverHead(fields: string[], endStream: boolean): void {
    this.listener.onHead(this.#status, fields, endStream);
  }
}
