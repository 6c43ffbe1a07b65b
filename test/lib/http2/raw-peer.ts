import { createServer, type Socket } from "node:net";
import { Flag, FRAME_HEADER_LENGTH, FrameType, writeFrameHeader } from "../../../lib/http2/frames.js";
import { HpackEncoder } from "../../../lib/http2/hpack.js";
import { eventually } from "../../support/eventually.js";
import { cleanups, openSession, portOf } from "./h2-kit.js";

/** A server of hand-built frames, for a peer's misbehaviour; it listens on 127.0.0.1 only. */

export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

/** One connection of a raw server: the frames the client sent, and a way to send any bytes back. */
export class RawPeer {
  readonly socket: Socket;
  readonly frames: Frame[] = [];
  prefaceSeen = false;
  closed = false;
  /** Told each frame as it arrives, after it was recorded: a peer that answers as it reads. */
  onFrame: ((frame: Frame) => void) | undefined;
  #buffer = Buffer.alloc(0);
  readonly #encoder = new HpackEncoder();

  constructor(socket: Socket) {
    this.socket = socket;
    socket.on("error", () => undefined);
    socket.on("close", () => {
      this.closed = true;
    });
    socket.on("data", (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      if (!this.prefaceSeen) {
        if (this.#buffer.length < 24) return;
        this.prefaceSeen = true;
        this.#buffer = this.#buffer.subarray(24);
      }
      while (this.#buffer.length >= 9) {
        const length = this.#buffer.readUIntBE(0, 3);
        if (this.#buffer.length < 9 + length) break;
        const frame = {
          type: this.#buffer[3] as number,
          flags: this.#buffer[4] as number,
          streamId: this.#buffer.readUInt32BE(5) & 0x7fffffff,
          payload: Buffer.from(this.#buffer.subarray(9, 9 + length)),
        };
        this.frames.push(frame);
        this.#buffer = this.#buffer.subarray(9 + length);
        this.onFrame?.(frame);
      }
    });
  }

  send(type: number, flags: number, streamId: number, payload: Buffer | number[] = []): void {
    const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
    const out = Buffer.allocUnsafe(FRAME_HEADER_LENGTH + body.length);
    writeFrameHeader(out, 0, body.length, type, flags, streamId);
    body.copy(out, FRAME_HEADER_LENGTH);
    if (!this.socket.destroyed) this.socket.write(out);
  }

  /** SETTINGS with [id, value, ...]. */
  settings(values: number[] = []): void {
    const payload = Buffer.alloc(values.length * 3);
    for (let i = 0; i + 1 < values.length; i += 2) {
      payload.writeUInt16BE(values[i] as number, i * 3);
      payload.writeUInt32BE(values[i + 1] as number, i * 3 + 2);
    }
    this.send(0x4, 0, 0, payload);
  }

  /** A HEADERS frame with END_HEADERS. */
  headers(streamId: number, fields: string[], endStream: boolean): void {
    this.send(0x1, 0x4 | (endStream ? 0x1 : 0), streamId, this.#encoder.encode(fields));
  }

  block(fields: string[]): Buffer {
    return this.#encoder.encode(fields);
  }

  data(streamId: number, payload: string | Buffer, endStream: boolean): void {
    this.send(0x0, endStream ? 0x1 : 0, streamId, Buffer.isBuffer(payload) ? payload : Buffer.from(payload));
  }

  of(type: number): Frame[] {
    return this.frames.filter((frame) => frame.type === type);
  }

  /** Stream ids of the client's HEADERS frames. */
  requests(): number[] {
    return this.of(0x1).map((frame) => frame.streamId);
  }

  goaways(): { last: number; code: number }[] {
    return this.of(0x7).map((f) => ({ last: f.payload.readUInt32BE(0), code: f.payload.readUInt32BE(4) }));
  }

  resets(): { streamId: number; code: number }[] {
    return this.of(0x3).map((f) => ({ streamId: f.streamId, code: f.payload.readUInt32BE(0) }));
  }
}

/** A server of hand-built frames: `onPeer` gets each connection; it sends its SETTINGS unless `noSettings`. */
export async function rawServer(
  onPeer: (peer: RawPeer) => void = () => undefined,
  initialSettings: number[] | "none" = [],
): Promise<{ port: number; peers: RawPeer[] }> {
  const peers: RawPeer[] = [];
  const server = createServer((socket) => {
    const peer = new RawPeer(socket);
    peers.push(peer);
    if (initialSettings !== "none") peer.settings(initialSettings);
    onPeer(peer);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const peer of peers) peer.socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { port: portOf(server), peers };
}

export async function connected(initialSettings: number[] | "none" = []) {
  const server = await rawServer(() => undefined, initialSettings);
  const opened = openSession(server.port);
  const peer = async (): Promise<RawPeer> => {
    await eventually(
      () => server.peers.length === 1 && (server.peers[0]?.prefaceSeen ?? false),
      2000,
      "a peer",
    );
    return server.peers[0] as RawPeer;
  };
  return { ...opened, port: server.port, peer: await peer() };
}

export async function requestsSeen(peer: RawPeer, count: number): Promise<void> {
  await eventually(
    () => peer.requests().length >= count,
    2000,
    () => `${count} HEADERS (saw ${peer.requests()})`,
  );
}

export async function goawaySeen(peer: RawPeer): Promise<{ last: number; code: number }> {
  await eventually(() => peer.goaways().length > 0, 2000, "a GOAWAY from the client");
  return peer.goaways()[0] as { last: number; code: number };
}

/**
 * Sends a PING and waits for the client's ACK of it: the client reads in order, so by then it has acted on every
 * frame the peer sent before, and whatever it wrote in answer arrived first (RFC 9113 §6.7).
 */
export async function pingAnswered(peer: RawPeer, id: number): Promise<void> {
  const payload = Buffer.alloc(8);
  payload.writeUInt32BE(id, 4);
  peer.send(FrameType.PING, 0, 0, payload);
  const acked = () =>
    peer.of(FrameType.PING).some((frame) => frame.flags === Flag.ACK && frame.payload.equals(payload));
  await eventually(acked, 2000, "the client's PING ACK");
}

export const OK = [":status", "200"];
