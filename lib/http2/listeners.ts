/** What a session tells its user (client-session.ts). */

export interface StreamListener {
  /** The response head (1xx informational heads skipped; 101 is a stream PROTOCOL_ERROR in HTTP/2). fields: flat lowercase list WITHOUT pseudo-header fields. */
  onHead(status: number, fields: string[], endStream: boolean): void;
  /** A DATA payload (padding removed). The stream stops crediting its window while paused (stream.pause()). */
  onData(chunk: Buffer): void;
  /** A trailing HEADERS (END_STREAM), flat list. */
  onTrailers(fields: string[]): void;
  /** After write() returned false: the stream (and connection) send window opened again. */
  onDrain(): void;
  /**
   * Once per stream, last: code 0 and error undefined when the stream completed (END_STREAM both ways);
   * otherwise the RST_STREAM code received or sent, and `unprocessed` true only when the peer certainly did not act on the request:
   * REFUSED_STREAM (RFC 9113 §8.7), a stream id above a GOAWAY's last-stream-id (§6.8), or the stream never sent because the session failed/closed first.
   */
  onClose(code: number, unprocessed: boolean, error: Error | undefined): void;
}

export interface SessionListener {
  /** The peer's first SETTINGS arrived (and was acknowledged): streams may go. */
  onReady(): void;
  /** GOAWAY received (§6.8): no new stream goes on this session; lower streams finish. */
  onGoaway(lastStreamId: number, code: number): void;
  /** The connection is gone (socket closed or session destroyed), with the error if any. Every open stream got its onClose first. */
  onClose(error: Error | undefined): void;
}
