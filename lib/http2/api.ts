/** What a session's user sees (client-session.ts): the stream it gets, what it is told, and the errors. */

/** One request and its response (RFC 9113 §8.1), as request() hands it out. */
export interface ClientStream {
  /** undefined while queued (§5.1.2). */
  readonly id: number | undefined;
  /** Sends a DATA chunk within the flow-control windows (§6.9); false when some waits (onDrain follows). */
  write(chunk: Buffer): boolean;
  /** END_STREAM on our side, after what was written. */
  end(): void;
  /** RST_STREAM(code) unless closed (§6.4); onClose follows, unprocessed if the stream was never sent. */
  reset(code: number): void;
  /** Holds received DATA and stops crediting the stream's window. */
  pause(): void;
  /** Delivers what was held and credits the window again. */
  resume(): void;
}

/** What a stream of either role tells of the peer's message body and of its own end. */
export interface BodyListener {
  /** A DATA payload (padding removed). The stream stops crediting its window while paused (stream.pause()). */
  onData(chunk: Buffer): void;
  /** A trailing HEADERS (END_STREAM), flat list. */
  onTrailers(fields: string[]): void;
  /** The peer's message ended and all of it was delivered (before onClose, which waits for our end too). */
  onEnd?(): void;
  /** After write() returned false: the stream (and connection) send window opened again. */
  onDrain(): void;
  /**
   * Once per stream, last: code 0 and error undefined when the stream completed (END_STREAM both ways);
   * otherwise the RST_STREAM code received or sent, and `unprocessed` true only when the peer certainly did not act on the request:
   * REFUSED_STREAM (RFC 9113 §8.7), a stream id above a GOAWAY's last-stream-id (§6.8), or the stream never sent because the session failed/closed first.
   */
  onClose(code: number, unprocessed: boolean, error: Error | undefined): void;
}

export interface StreamListener extends BodyListener {
  /** The response head (1xx informational heads skipped; 101 is a stream PROTOCOL_ERROR in HTTP/2). fields: flat lowercase list WITHOUT pseudo-header fields. */
  onHead(status: number, fields: string[], endStream: boolean): void;
}

export interface SessionListener {
  /** The peer's first SETTINGS arrived (and was acknowledged): streams may go. */
  onReady(): void;
  /** GOAWAY received (§6.8): no new stream goes on this session; lower streams finish. */
  onGoaway(lastStreamId: number, code: number): void;
  /** The connection is gone (socket closed or session destroyed), with the error if any. Every open stream got its onClose first. */
  onClose(error: Error | undefined): void;
}

/** A stream ended by RST_STREAM (RFC 9113 §6.4): sent by us (`remote` false) or by the peer. */
export class Http2StreamError extends Error {
  override readonly name = "Http2StreamError";

  constructor(
    message: string,
    readonly code: number,
    readonly remote: boolean,
  ) {
    super(message);
  }
}

/**
 * The end of a whole session: a connection error (§5.4.1) we detected (`remote` false, code sent in GOAWAY),
 * a GOAWAY from the peer (`remote` true), the socket closing, or the session destroyed (code undefined).
 */
export class Http2SessionError extends Error {
  override readonly name = "Http2SessionError";

  constructor(
    message: string,
    readonly code: number | undefined,
    readonly remote: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A connection error (§5.4.1) found in what the peer sent. */
export function connectionError(code: number, message: string): Http2SessionError {
  return new Http2SessionError(message, code, false);
}

/** The most common connection error, PROTOCOL_ERROR (code 0x1). */
export function protocolError(message: string): Http2SessionError {
  return new Http2SessionError(message, 0x1, false);
}

/** A field block that cannot be decoded (RFC 9113 §4.3). */
export function compressionError(message: string): Http2SessionError {
  return new Http2SessionError(`a field block that cannot be decoded: ${message}`, 0x9, false);
}
