import { connect, createServer, type Server, type Socket } from "node:net";
import { send } from "../harness.js";

/**
 * Raw-socket tools for the hostile-client and hostile-backend tests: the bugs they pin need bytes no
 * well-behaved client or server library sends. Everything binds and connects to 127.0.0.1 only.
 */

export interface RawBackend {
  readonly host: "127.0.0.1";
  readonly port: number;
  /** Each request head the backend read, as received (Latin-1). */
  readonly heads: string[];
  close(): Promise<void>;
}

/** A backend that answers every request head it reads with `reply` (raw bytes) and keeps the connection. */
export async function rawBackend(
  reply: Buffer | ((head: string) => Buffer | undefined),
): Promise<RawBackend> {
  const heads: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let pending = "";
    socket.on("data", (chunk: Buffer) => {
      pending += chunk.toString("latin1");
      let end = pending.indexOf("\r\n\r\n");
      while (end >= 0) {
        const head = pending.slice(0, end);
        pending = pending.slice(end + 4);
        heads.push(head);
        const bytes = typeof reply === "function" ? reply(head) : reply;
        if (bytes) socket.write(bytes);
        end = pending.indexOf("\r\n\r\n");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    host: "127.0.0.1",
    port,
    heads,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Writes `bytes` on a fresh connection to the router and collects everything until the peer closes. */
export function rawExchange(port: number, bytes: Buffer | string, timeoutMs = 10_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error("raw exchange timed out")));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", () => resolve(Buffer.concat(chunks)));
    socket.on("error", (error) => (chunks.length > 0 ? resolve(Buffer.concat(chunks)) : reject(error)));
    socket.write(bytes);
  });
}

/** The status line of a raw reply ("" when there was none). */
export function statusLineOf(reply: Buffer): string {
  const text = reply.toString("latin1");
  const end = text.indexOf("\r\n");
  return end < 0 ? text : text.slice(0, end);
}

/** One sample of the router's Prometheus text (0 when absent), read through the admin endpoint. */
export async function metric(port: number, sample: string): Promise<number> {
  const res = await send(port, {
    path: "/_edgeslice/metrics",
    headers: { authorization: "Bearer secret-token" },
  });
  for (const line of res.body.split("\n")) {
    if (line.startsWith(`${sample} `)) return Number(line.slice(sample.length + 1));
  }
  return 0;
}

/** Polls `condition` until it holds, failing after 5 s with `what`. */
export async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
