import { once } from "node:events";
import { connect, createServer, type Socket } from "node:net";
import type { BodyListener } from "../../../lib/http2/api.js";
import { Flag, FrameType } from "../../../lib/http2/frames.js";
import { HpackDecoder, HpackEncoder } from "../../../lib/http2/hpack.js";
import {
  type FloodKind,
  Http2ServerSession,
  type ServerSessionOptions,
  type ServerStream,
} from "../../../lib/http2/server-session.js";
import { frame, PREFACE } from "../../functions/node/http2/frames.js";
import { eventually } from "../../support/eventually.js";
import { cleanups, portOf } from "./h2-kit.js";

/** Http2ServerSession on a loopback net.Server, and a raw client of hand-built frames; 127.0.0.1 only. */

export const OPTIONS: ServerSessionOptions = {
  maxConcurrentStreams: 100,
  maxHeaderListSize: 16 * 1024,
  initialStreamWindow: 65_535,
  connectionWindow: 65_535,
  idleTimeoutMs: 0,
};

export const GET = [":method", "GET", ":scheme", "http", ":authority", "example.test", ":path", "/"];
export const POST = [":method", "POST", ":scheme", "http", ":authority", "example.test", ":path", "/up"];

/** One server connection: its session and what the session told its listener. */
export class ServerSide {
  readonly session: Http2ServerSession;
  readonly requests: ServerStream[] = [];
  readonly floods: FloodKind[] = [];
  readonly failures: unknown[] = [];
  requestsClosed = 0;
  /** 'data' events on the server's socket: how the client's bytes were sliced into reads. */
  reads = 0;
  closed: { error: Error | undefined } | undefined;

  constructor(socket: Socket, options: ServerSessionOptions, onRequest?: (stream: ServerStream) => void) {
    this.session = new Http2ServerSession(
      socket,
      {
        onRequest: (stream) => {
          this.requests.push(stream);
          onRequest?.(stream);
        },
        onRequestClosed: () => {
          this.requestsClosed++;
        },
        onFlood: (kind) => {
          this.floods.push(kind);
        },
        onFailure: (error) => {
          this.failures.push(error);
        },
        onClose: (error) => {
          this.closed = { error };
        },
      },
      options,
    );
    socket.on("data", () => {
      this.reads++;
    });
  }
}

export async function serve(
  options: Partial<ServerSessionOptions> = {},
  onRequest?: (stream: ServerStream) => void,
): Promise<{ port: number; sides: ServerSide[] }> {
  const sides: ServerSide[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    sides.push(new ServerSide(socket, { ...OPTIONS, ...options }, onRequest));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { port: portOf(server), sides };
}

/** A server, and a raw client that sent the preface and SETTINGS of `clientSettings` ([id, value, ...]). */
export async function open(
  options: Partial<ServerSessionOptions> = {},
  onRequest?: (stream: ServerStream) => void,
  clientSettings: number[] = [],
): Promise<{ client: RawClient; side: ServerSide; port: number }> {
  const { port, sides } = await serve(options, onRequest);
  const client = await RawClient.open(port, Buffer.concat([PREFACE, settings(clientSettings)]));
  await eventually(() => sides.length === 1, 2000, "the server's session");
  return { client, side: sides[0] as ServerSide, port };
}

export function settings(values: number[], flags = 0): Buffer {
  const payload = Buffer.alloc(values.length * 3);
  for (let i = 0; i + 1 < values.length; i += 2) {
    payload.writeUInt16BE(values[i] as number, i * 3);
    payload.writeUInt32BE(values[i + 1] as number, i * 3 + 2);
  }
  return frame(FrameType.SETTINGS, flags, 0, payload);
}

export function u32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}

export interface SeenFrame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
  /** A HEADERS frame's decoded fields. */
  readonly fields?: string[];
}

/** A client of hand-built frames: records what the server sends (HEADERS decoded) and ACKs its SETTINGS. */
export class RawClient {
  readonly frames: SeenFrame[] = [];
  /** The server ended the connection (FIN). */
  ended = false;
  /** ACK the server's SETTINGS as they come (not while a test writes the preface piece by piece). */
  ackSettings = true;
  #pending = Buffer.alloc(0);
  #pings = 0;
  readonly #encoder = new HpackEncoder();
  readonly #decoder = new HpackDecoder();

  private constructor(readonly socket: Socket) {
    socket.on("error", () => undefined);
    socket.on("end", () => {
      this.ended = true;
    });
    socket.on("data", (chunk: Buffer) => this.#read(chunk));
  }

  static async open(port: number, first?: Buffer): Promise<RawClient> {
    const socket = connect({ host: "127.0.0.1", port, noDelay: true });
    cleanups.push(() => {
      socket.destroy();
    });
    await once(socket, "connect");
    const client = new RawClient(socket);
    client.ackSettings = first !== undefined;
    if (first !== undefined) client.write(first);
    return client;
  }

  write(bytes: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  send(type: number, flags: number, stream: number, payload?: Buffer): void {
    this.write(frame(type, flags, stream, payload));
  }

  headersFrame(stream: number, fields: readonly string[], endStream: boolean): Buffer {
    const flags = Flag.END_HEADERS | (endStream ? Flag.END_STREAM : 0);
    return frame(FrameType.HEADERS, flags, stream, this.#encoder.encode(fields));
  }

  headers(stream: number, fields: readonly string[], endStream: boolean): void {
    this.write(this.headersFrame(stream, fields, endStream));
  }

  data(stream: number, payload: string | Buffer, endStream: boolean): void {
    this.write(dataFrame(stream, payload, endStream));
  }

  of(type: number, stream?: number): SeenFrame[] {
    return this.frames.filter((f) => f.type === type && (stream === undefined || f.stream === stream));
  }

  goaways(): { last: number; code: number }[] {
    return this.of(FrameType.GOAWAY).map((f) => ({
      last: f.payload.readUInt32BE(0),
      code: f.payload.readUInt32BE(4),
    }));
  }

  resets(): Map<number, number> {
    return new Map(this.of(FrameType.RST_STREAM).map((f) => [f.stream, f.payload.readUInt32BE(0)]));
  }

  dataBytes(stream: number): number {
    return this.of(FrameType.DATA, stream).reduce((sum, f) => sum + f.payload.length, 0);
  }

  /** The server sent END_STREAM on `stream`. */
  streamEnded(stream: number): boolean {
    return this.frames.some((f) => f.stream === stream && f.type <= 1 && (f.flags & Flag.END_STREAM) !== 0);
  }

  acks(type: number): number {
    return this.of(type).filter((f) => (f.flags & Flag.ACK) !== 0).length;
  }

  /** Polls until `condition` holds (3 s at most), naming the frames seen when it times out. */
  until(condition: () => boolean, what: string): Promise<void> {
    return eventually(condition, 3000, () => `${what} (saw ${this.describe()})`);
  }

  /** A PING answered: the server handled every frame sent before it, and what it wrote meanwhile arrived. */
  async sync(): Promise<void> {
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(0x73796e63);
    payload.writeUInt32BE(++this.#pings, 4);
    this.send(FrameType.PING, 0, 0, payload);
    const acked = (f: SeenFrame) =>
      f.type === FrameType.PING && f.flags === Flag.ACK && f.payload.equals(payload);
    await this.until(() => this.frames.some(acked), "the PING ACK");
  }

  async goaway(): Promise<{ last: number; code: number }> {
    await this.until(() => this.goaways().length > 0, "a GOAWAY");
    return this.goaways()[0] as { last: number; code: number };
  }

  describe(): string {
    return this.frames.map((f) => `${f.type}/${f.flags}@${f.stream}`).join(" ") + (this.ended ? " FIN" : "");
  }

  #read(chunk: Buffer): void {
    this.#pending = Buffer.concat([this.#pending, chunk]);
    while (this.#pending.length >= 9) {
      const length = this.#pending.readUIntBE(0, 3);
      if (this.#pending.length < 9 + length) return;
      const type = this.#pending[3] as number;
      const payload = Buffer.from(this.#pending.subarray(9, 9 + length));
      const seen: SeenFrame = {
        type,
        flags: this.#pending[4] as number,
        stream: this.#pending.readUInt32BE(5) & 0x7fffffff,
        payload,
        ...(type === FrameType.HEADERS ? { fields: this.#decoder.decode(payload) } : {}),
      };
      this.#pending = this.#pending.subarray(9 + length);
      this.frames.push(seen);
      if (type === FrameType.SETTINGS && seen.flags === 0 && this.ackSettings)
        this.write(settings([], Flag.ACK));
    }
  }
}

export function dataFrame(stream: number, payload: string | Buffer, endStream: boolean): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload) : payload;
  return frame(FrameType.DATA, endStream ? Flag.END_STREAM : 0, stream, body);
}

/** What a server stream's body listener heard, in order. */
export class BodyRecord implements BodyListener {
  readonly events: string[] = [];
  readonly chunks: Buffer[] = [];
  drains = 0;
  onData(chunk: Buffer): void {
    this.chunks.push(Buffer.from(chunk));
    this.events.push(`data:${chunk.length < 64 ? chunk.toString() : chunk.length}`);
  }
  onTrailers(fields: string[]): void {
    this.events.push(`trailers:${fields.join(",")}`);
  }
  onEnd(): void {
    this.events.push("end");
  }
  onDrain(): void {
    this.drains++;
    this.events.push("drain");
  }
  onClose(code: number): void {
    this.events.push(`close:${code}`);
  }
}

/** Ends a draining session's last stream with 200 and a 4-octet body, then waits for the server's FIN after it. */
export async function answerLastStream(stream: ServerStream, client: RawClient): Promise<void> {
  stream.respond([":status", "200"], false);
  stream.write(Buffer.from("last"));
  stream.end();
  await client.until(() => client.ended, "the server's FIN");
}
