import * as http2 from "node:http2";
import { connect, type Server, type Socket } from "node:net";
import type { SessionListener, StreamListener } from "../../../lib/http2/api.js";
import type { ClientStream } from "../../../lib/http2/client-session.js";
import { Http2ClientSession, type SessionOptions } from "../../../lib/http2/client-session.js";

/** Servers and recorders for the HTTP/2 client's tests; every server listens on 127.0.0.1 only. */

export const cleanups: (() => Promise<void> | void)[] = [];

export async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export function portOf(server: Server | http2.Http2Server): number {
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : 0;
}

/** node:http2's own cleartext server answering with `onStream`. */
export async function nodeServer(
  onStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void,
  settings: http2.Settings = {},
): Promise<{ port: number; sessions: Set<http2.ServerHttp2Session>; sockets: Set<Socket> }> {
  const server = http2.createServer({ settings });
  const sessions = new Set<http2.ServerHttp2Session>();
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
    session.on("error", () => undefined);
  });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => undefined);
    onStream(stream, headers);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  );
  return { port: portOf(server), sessions, sockets };
}

/** What a session told its listener. */
export class SessionRecord implements SessionListener {
  readyCount = 0;
  goaways: { last: number; code: number }[] = [];
  closed: { error: Error | undefined } | undefined;
  onReady(): void {
    this.readyCount++;
  }
  onGoaway(lastStreamId: number, code: number): void {
    this.goaways.push({ last: lastStreamId, code });
  }
  onClose(error: Error | undefined): void {
    this.closed = { error };
  }
}

export function openSession(
  port: number,
  options?: SessionOptions,
): { session: Http2ClientSession; record: SessionRecord; socket: Socket } {
  const socket = connect({ host: "127.0.0.1", port, noDelay: true });
  const record = new SessionRecord();
  const session = new Http2ClientSession(socket, record, options);
  cleanups.push(() => session.destroy());
  return { session, record, socket };
}

/** What a stream told its listener. */
export class StreamRecord implements StreamListener {
  status: number | undefined;
  fields: string[] | undefined;
  headEnded = false;
  chunks: Buffer[] = [];
  trailers: string[] | undefined;
  drains = 0;
  closed: { code: number; unprocessed: boolean; error: Error | undefined } | undefined;
  readonly events: string[] = [];
  readonly done: Promise<void>;
  #resolve: () => void = () => undefined;
  /** Called on every DATA chunk, after it is recorded. */
  onChunk: ((chunk: Buffer) => void) | undefined;
  onDrained: (() => void) | undefined;
  /** Called from onClose, after it is recorded. */
  onClosed: (() => void) | undefined;

  constructor() {
    this.done = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }
  onHead(status: number, fields: string[], endStream: boolean): void {
    this.events.push("head");
    this.status = status;
    this.fields = fields;
    this.headEnded = endStream;
  }
  onData(chunk: Buffer): void {
    this.events.push("data");
    this.chunks.push(Buffer.from(chunk));
    this.onChunk?.(chunk);
  }
  onTrailers(fields: string[]): void {
    this.events.push("trailers");
    this.trailers = fields;
  }
  onDrain(): void {
    this.drains++;
    this.onDrained?.();
  }
  onClose(code: number, unprocessed: boolean, error: Error | undefined): void {
    this.events.push("close");
    this.closed = { code, unprocessed, error };
    this.onClosed?.();
    this.#resolve();
  }
  body(): string {
    return Buffer.concat(this.chunks).toString();
  }
  bytes(): number {
    return this.chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  }
}

export function get(port: number, path = "/", extra: string[] = []): string[] {
  return [":method", "GET", ":scheme", "http", ":authority", `127.0.0.1:${port}`, ":path", path, ...extra];
}

export function post(port: number, path = "/", extra: string[] = []): string[] {
  return [":method", "POST", ":scheme", "http", ":authority", `127.0.0.1:${port}`, ":path", path, ...extra];
}

export function send(
  session: Http2ClientSession,
  fields: string[],
  body?: Buffer | string,
): { stream: ClientStream; record: StreamRecord } {
  const record = new StreamRecord();
  const stream = session.request(fields, body === undefined, record);
  if (body !== undefined) {
    stream.write(Buffer.isBuffer(body) ? body : Buffer.from(body));
    stream.end();
  }
  return { stream, record };
}

/** Field value of `name` in a flat list. */
export function field(fields: readonly string[] | undefined, name: string): string | undefined {
  if (fields === undefined) return undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}
