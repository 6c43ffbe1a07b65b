/** The HTTP/2 connection preface a prior-knowledge client sends first (RFC 9113 §3.4). */
export const HTTP2_PREFACE: Buffer = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * What a connection's first bytes say: "http2" once they hold the whole preface, "http1" as soon as one
 * byte differs from it, "undecided" while they are a proper prefix of it (a preface split across packets).
 * No HTTP/1.1 request starts with "PRI " (RFC 9113 §3.4 chose the method for that), so the first byte
 * decides almost every HTTP/1.1 connection.
 */
export type PrefaceVerdict = "http2" | "http1" | "undecided";

export function prefaceVerdict(bytes: Uint8Array): PrefaceVerdict {
  const length = Math.min(bytes.length, HTTP2_PREFACE.length);
  for (let i = 0; i < length; i++) if (bytes[i] !== HTTP2_PREFACE[i]) return "http1";
  return length === HTTP2_PREFACE.length ? "http2" : "undecided";
}
