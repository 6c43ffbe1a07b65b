import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";

/**
 * A small HTTP/2 frame encoder and reader for the attack tests (RFC 9113 §4.1: a 9-byte header of length,
 * type, flags and stream id), and HPACK literals (RFC 7541 §6.2): enough to send the frames a well-behaved
 * client library never would.
 */
export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;

/** Error codes (RFC 9113 §7). */
export const CODE = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb,
} as const;

export function frame(
  type: number,
  flags: number,
  stream: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header.writeUInt8(type, 3);
  header.writeUInt8(flags, 4);
  header.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

export const settingsFrame = (ack = false) => frame(FRAME.SETTINGS, ack ? FLAG.ACK : 0, 0);
export const pingFrame = (ack = false) => frame(FRAME.PING, ack ? FLAG.ACK : 0, 0, Buffer.alloc(8, 7));

export function rstStreamFrame(stream: number, code: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code);
  return frame(FRAME.RST_STREAM, 0, stream, payload);
}

/** An HPACK integer with an `prefixBits`-bit prefix, the first byte's high bits set to `high` (RFC 7541 §5.1). */
export function hpackInteger(value: number, prefixBits: number, high: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([high | value]);
  const bytes = [high | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, "latin1");
  return Buffer.concat([hpackInteger(bytes.length, 7, 0), bytes]);
}

/** A literal field without indexing, new name (RFC 7541 §6.2.2). */
export function literal(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00]), hpackString(name), hpackString(value)]);
}

/** A literal field with incremental indexing, new name (RFC 7541 §6.2.1): it enters the dynamic table. */
export function indexedLiteral(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x40]), hpackString(name), hpackString(value)]);
}

/** An indexed field (RFC 7541 §6.1); 62 is the newest dynamic-table entry. */
export const indexed = (index: number) => hpackInteger(index, 7, 0x80);

/** The header block of a GET to `authority` + `path`. */
export function requestBlock(authority: string, path = "/", method = "GET"): Buffer {
  return Buffer.concat([
    literal(":method", method),
    literal(":scheme", "http"),
    literal(":path", path),
    literal(":authority", authority),
  ]);
}

export interface ReadFrame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
}

/** A raw HTTP/2 connection to the router: writes frames, reads what comes back, ACKs the router's SETTINGS. */
export class RawH2 {
  readonly socket: Socket;
  readonly frames: ReadFrame[] = [];
  readonly closed: Promise<void>;
  #pending = Buffer.alloc(0);

  private constructor(socket: Socket) {
    this.socket = socket;
    // Not events.once: it would reject on the socket's 'error' (EPIPE when the router has closed).
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => this.#read(chunk));
  }

  /** Connects, sends the preface and an empty SETTINGS frame. */
  static async open(port: number): Promise<RawH2> {
    const socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    const raw = new RawH2(socket);
    raw.write(Buffer.concat([PREFACE, settingsFrame()]));
    return raw;
  }

  /** The same over TLS, h2 chosen by ALPN for `servername` (a test certificate: not verified). */
  static async openTls(port: number, servername: string): Promise<RawH2> {
    const socket = tlsConnect({
      port,
      host: "127.0.0.1",
      servername,
      ALPNProtocols: ["h2"],
      rejectUnauthorized: false,
    });
    await once(socket, "secureConnect");
    const raw = new RawH2(socket);
    raw.write(Buffer.concat([PREFACE, settingsFrame()]));
    return raw;
  }

  write(bytes: Buffer): boolean {
    return this.socket.destroyed ? false : this.socket.write(bytes);
  }

  /** The GOAWAY frame's error code once one came, undefined before. */
  goawayCode(): number | undefined {
    const goaway = this.frames.find((f) => f.type === FRAME.GOAWAY);
    return goaway?.payload.readUInt32BE(4);
  }

  /** The RST_STREAM codes the router sent, by stream. */
  resets(): Map<number, number> {
    return new Map(
      this.frames
        .filter((f) => f.type === FRAME.RST_STREAM)
        .map((f) => [f.stream, f.payload.readUInt32BE(0)]),
    );
  }

  /** Streams that got a HEADERS frame (an answer). */
  answered(): Set<number> {
    return new Set(this.frames.filter((f) => f.type === FRAME.HEADERS).map((f) => f.stream));
  }

  destroy(): void {
    this.socket.destroy();
  }

  #read(chunk: Buffer): void {
    this.#pending = Buffer.concat([this.#pending, chunk]);
    while (this.#pending.length >= 9) {
      const length = this.#pending.readUIntBE(0, 3);
      if (this.#pending.length < 9 + length) return;
      const read: ReadFrame = {
        type: this.#pending.readUInt8(3),
        flags: this.#pending.readUInt8(4),
        stream: this.#pending.readUInt32BE(5) & 0x7fffffff,
        payload: this.#pending.subarray(9, 9 + length),
      };
      this.#pending = this.#pending.subarray(9 + length);
      this.frames.push(read);
      if (read.type === FRAME.SETTINGS && (read.flags & FLAG.ACK) === 0) this.write(settingsFrame(true));
    }
  }
}
