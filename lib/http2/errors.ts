/** A stream ended by RST_STREAM (RFC 9113 §6.4): sent by us (`remote` false) or by the peer. */
export class Http2StreamError extends Error {
  readonly code: number;
  readonly remote: boolean;

  constructor(message: string, code: number, remote: boolean) {
    super(message);
    this.name = "Http2StreamError";
    this.code = code;
    this.remote = remote;
  }
}

/**
 * The end of a whole session: a connection error (§5.4.1) we detected (`remote` false, code sent in GOAWAY),
 * a GOAWAY from the peer (`remote` true), the socket closing, or the session destroyed (code undefined).
 */
export class Http2SessionError extends Error {
  readonly code: number | undefined;
  readonly remote: boolean;

  constructor(message: string, code: number | undefined, remote: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = "Http2SessionError";
    this.code = code;
    this.remote = remote;
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
