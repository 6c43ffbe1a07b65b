import { readFieldLine } from "./field-lines.js";
import { MalformedResponseError } from "./response-head.js";

/** The trailer section is bounded as a head is: in bytes, and in fields (each one is read and checked). */
export const MAX_TRAILER_BYTES = 16 * 1024;
export const MAX_TRAILER_FIELDS = 100;

/** Where trailer fields are read into before they are dropped. */
const SCRATCH: string[] = [];

/**
 * The trailer fields after a chunked body (RFC 9112 §7.1.2), checked and dropped (RFC 9110 §6.5.1: a proxy may
 * discard them), within bounds. A field that frames a message has no place there (§6.5.1), and Node's parser
 * refuses one.
 */
export class TrailerSection {
  #bytes = 0;
  #fields = 0;

  start(): void {
    this.#bytes = 0;
    this.#fields = 0;
  }

  /** Reads the field line data[offset, offset + lineBytes), its CRLF included; throws MalformedResponseError. */
  read(data: Buffer, offset: number, lineBytes: number): void {
    this.#bytes += lineBytes;
    if (++this.#fields > MAX_TRAILER_FIELDS || this.#bytes > MAX_TRAILER_BYTES) {
      throw new MalformedResponseError("trailer section too large");
    }
    const line = data.toString("latin1", offset, offset + lineBytes);
    const end = readFieldLine(line, 0, SCRATCH);
    const name = SCRATCH[0];
    SCRATCH.length = 0;
    if (end !== line.length || name === "content-length" || name === "transfer-encoding") {
      throw new MalformedResponseError("malformed trailer field");
    }
  }
}
