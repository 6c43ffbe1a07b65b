import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A tiny WebSocket backend for the workerd tests: workerd speaks real WebSocket frames to the backend, so
 * unlike the Node tests' byte echo this one reads masked client frames (RFC 6455 §5.2-5.3) and answers
 * with unmasked ones. Text frames only, no fragmentation, no extensions: enough for short test messages.
 */
const WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const TEXT = 0x1;
const CLOSE = 0x8;

export interface WebSocketBackend {
  readonly ip: string;
  readonly port: number;
  /** Every handshake it got. */
  readonly seen: { readonly url: string; readonly headers: IncomingMessage["headers"] }[];
  /** TCP connections it accepted. */
  connections(): number;
  /** Resolves once an upgraded connection closed. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** `declineWith`: a raw HTTP answer written instead of the 101. */
export async function startWebSocketBackend(
  ip: "127.0.0.1" | "::1",
  name: string,
  declineWith?: string,
): Promise<WebSocketBackend> {
  const seen: { url: string; headers: IncomingMessage["headers"] }[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  const server: Server = createServer((req, res) => {
    req.resume();
    res.writeHead(426, { upgrade: "websocket", connection: "upgrade" }).end();
  });
  server.on("connection", (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    socket.on("error", () => undefined);
    if (declineWith !== undefined) {
      socket.end(declineWith);
      return;
    }
    const accept = createHash("sha1")
      .update(`${req.headers["sec-websocket-key"] ?? ""}${WEBSOCKET_GUID}`)
      .digest("base64");
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    socket.write(frame(TEXT, Buffer.from(`hello from ${name}`)));
    socket.once("close", () => markClosed());
    let buffered = head;
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const parsed = readFrame(buffered);
        if (!parsed) break;
        buffered = buffered.subarray(parsed.length);
        if (parsed.opcode === TEXT) socket.write(frame(TEXT, Buffer.from(`echo: ${parsed.payload}`)));
        else if (parsed.opcode === CLOSE) {
          socket.end(frame(CLOSE, parsed.payload));
          return;
        }
      }
    };
    socket.on("data", onData);
    onData(Buffer.alloc(0));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, ip, () => resolve());
  });
  return {
    ip,
    port: (server.address() as AddressInfo).port,
    seen,
    connections: () => connections,
    closed,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One unmasked frame from the server, FIN set, payload under 64 KiB. */
function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const head =
    length < 126
      ? Buffer.from([0x80 | opcode, length])
      : Buffer.from([0x80 | opcode, 126, length >> 8, length & 0xff]);
  return Buffer.concat([head, payload]);
}

/** One whole (masked) client frame at the start of `data`, or undefined while it is incomplete. */
function readFrame(data: Buffer): { opcode: number; payload: Buffer; length: number } | undefined {
  if (data.length < 2) return undefined;
  const first = data[0] ?? 0;
  const second = data[1] ?? 0;
  let length = second & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (data.length < 4) return undefined;
    length = data.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (data.length < 10) return undefined;
    length = Number(data.readBigUInt64BE(2));
    offset = 10;
  }
  const masked = (second & 0x80) !== 0;
  const mask = masked ? data.subarray(offset, offset + 4) : undefined;
  if (masked) offset += 4;
  if (data.length < offset + length) return undefined;
  const payload = Buffer.from(data.subarray(offset, offset + length));
  if (mask) for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] ?? 0) ^ (mask[i & 3] ?? 0);
  return { opcode: first & 0x0f, payload, length: offset + length };
}
