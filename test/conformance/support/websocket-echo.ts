import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";

/** RFC 6455 §4.2.2: Sec-WebSocket-Accept is base64(SHA-1(key + this GUID)). */
const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const accept = (key: string) => createHash("sha1").update(`${key}${GUID}`).digest("base64");

export const TEXT = 0x1;
export const BINARY = 0x2;

/** One complete, unfragmented frame (RFC 6455 §5.2), masked when a client sends it (§5.3). */
export function encodeFrame(opcode: number, payload: Buffer, masked: boolean): Buffer {
  const length = payload.length;
  const lengthBytes =
    length < 126
      ? Buffer.from([length | (masked ? 0x80 : 0)])
      : Buffer.from([126 | (masked ? 0x80 : 0), length >> 8, length & 0xff]);
  if (!masked) return Buffer.concat([Buffer.from([0x80 | opcode]), lengthBytes, payload]);
  const mask = randomBytes(4);
  const body = Buffer.from(payload.map((byte, index) => byte ^ (mask[index % 4] as number)));
  return Buffer.concat([Buffer.from([0x80 | opcode]), lengthBytes, mask, body]);
}

/** Reads frames from `buffer`; returns the complete ones and what is left (lengths up to 65535). */
export function decodeFrames(buffer: Buffer): {
  frames: { opcode: number; payload: Buffer }[];
  rest: Buffer;
} {
  const frames: { opcode: number; payload: Buffer }[] = [];
  let offset = 0;
  for (;;) {
    if (buffer.length - offset < 2) break;
    const opcode = (buffer[offset] as number) & 0x0f;
    const masked = ((buffer[offset + 1] as number) & 0x80) !== 0;
    let length = (buffer[offset + 1] as number) & 0x7f;
    let head = 2;
    if (length === 126) {
      if (buffer.length - offset < 4) break;
      length = buffer.readUInt16BE(offset + 2);
      head = 4;
    }
    const maskAt = offset + head;
    const start = maskAt + (masked ? 4 : 0);
    if (buffer.length < start + length) break;
    const body = buffer.subarray(start, start + length);
    const payload = masked
      ? Buffer.from(body.map((byte, index) => byte ^ (buffer[maskAt + (index % 4)] as number)))
      : Buffer.from(body);
    frames.push({ opcode, payload });
    offset = start + length;
  }
  return { frames, rest: buffer.subarray(offset) };
}

/** A WebSocket server on 127.0.0.1 that echoes every text and binary message back, as the suite's echo does. */
export async function startWebSocketEcho(): Promise<{
  port: number;
  upgrades: () => number;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let upgrades = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    response.writeHead(426, { upgrade: "websocket" }).end();
  });
  server.on("upgrade", (request, socket: Socket) => {
    upgrades += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    const key = String(request.headers["sec-websocket-key"] ?? "");
    socket.write(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Accept: ${accept(key)}\r\n\r\n`,
    );
    let pending: Buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      const { frames, rest } = decodeFrames(Buffer.concat([pending, chunk]));
      pending = rest;
      for (const frame of frames) {
        if (frame.opcode === 0x8) socket.end(encodeFrame(0x8, frame.payload, false));
        else if (frame.opcode === TEXT || frame.opcode === BINARY)
          socket.write(encodeFrame(frame.opcode, frame.payload, false));
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as AddressInfo).port,
    upgrades: () => upgrades,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A WebSocket client session through `port` on 127.0.0.1: the handshake's answer, then messages both ways. */
export interface WebSocketSession {
  readonly status: number;
  /** Whether Sec-WebSocket-Accept proves the server read our key (RFC 6455 §4.1). */
  readonly accepted: boolean;
  exchange(opcode: number, payload: Buffer): Promise<{ opcode: number; payload: Buffer }>;
  close(): void;
}

export async function openWebSocket(port: number, host: string, path: string): Promise<WebSocketSession> {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  await once(socket, "connect");
  const key = randomBytes(16).toString("base64");
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nOrigin: http://gateway\r\n\r\n`,
  );
  let received: Buffer = Buffer.alloc(0);
  const waiters: (() => void)[] = [];
  socket.on("data", (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on("close", () => {
    for (const wake of waiters.splice(0)) wake();
  });
  const more = () => new Promise<void>((resolve) => waiters.push(resolve));
  let headEnd = received.indexOf("\r\n\r\n");
  while (headEnd < 0 && !socket.destroyed) {
    await more();
    headEnd = received.indexOf("\r\n\r\n");
  }
  const head = received.subarray(0, Math.max(headEnd, 0)).toString("latin1");
  const status = Number(head.split(" ")[1] ?? 0);
  const acceptLine = head
    .split("\r\n")
    .find((line) => line.toLowerCase().startsWith("sec-websocket-accept:"));
  // Frames arrive after the head; every frame received is queued in order.
  const queue: { opcode: number; payload: Buffer }[] = [];
  let pending: Buffer = received.subarray(headEnd + 4);
  const drain = () => {
    const { frames, rest } = decodeFrames(pending);
    queue.push(...frames);
    pending = Buffer.from(rest);
  };
  drain();
  socket.on("data", (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    drain();
  });
  return {
    status,
    accepted: acceptLine?.slice(acceptLine.indexOf(":") + 1).trim() === accept(key),
    async exchange(opcode, payload) {
      socket.write(encodeFrame(opcode, payload, true));
      while (queue.length === 0) {
        if (socket.destroyed) throw new Error("the connection closed before an answer");
        await more();
      }
      return queue.shift() as { opcode: number; payload: Buffer };
    },
    close: () => socket.destroy(),
  };
}
