import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * Real HTTP backends on loopback whose behaviour a test changes at runtime: answer (with their name), answer
 * late, or cut the connection. `/echo` answers the request body's length and SHA-256 so nothing can be lost
 * silently on the way.
 */
export type BackendBehaviour =
  | { readonly kind: "ok" }
  | { readonly kind: "slow"; readonly delayMs: number }
  | { readonly kind: "reset" };

export interface TestBackend {
  readonly name: string;
  readonly ip: string;
  readonly port: number;
  /** Requests that reached this backend (whatever it then did). */
  readonly hits: number;
  behave(behaviour: BackendBehaviour): void;
  /** Stops listening and destroys every open connection: the backend is gone. */
  kill(): Promise<void>;
}

export async function startBackend(
  name: string,
  options: { host?: string; handle?: (request: IncomingMessage, response: ServerResponse) => boolean } = {},
): Promise<TestBackend> {
  const host = options.host ?? "127.0.0.1";
  let behaviour: BackendBehaviour = { kind: "ok" };
  let hits = 0;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((request, response) => {
    hits++;
    if (behaviour.kind === "reset") {
      request.socket.destroy();
      return;
    }
    const answer = () => {
      if (options.handle?.(request, response)) return;
      if (request.url?.startsWith("/echo")) return echo(request, response, name);
      request.resume();
      response.writeHead(200, { "content-type": "text/plain", "x-backend": name });
      response.end(name);
    };
    if (behaviour.kind === "slow") {
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer();
      }, behaviour.delayMs);
      timers.add(timer);
      return;
    }
    answer();
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  let killed: Promise<void> | undefined;
  return {
    name,
    ip: host,
    port,
    get hits() {
      return hits;
    },
    behave(next) {
      behaviour = next;
    },
    kill() {
      killed ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return killed;
    },
  };
}

function echo(request: IncomingMessage, response: ServerResponse, name: string): void {
  const hash = createHash("sha256");
  let length = 0;
  request.on("data", (chunk: Buffer) => {
    hash.update(chunk);
    length += chunk.length;
  });
  request.on("end", () => {
    response.writeHead(200, { "content-type": "application/json", "x-backend": name });
    response.end(JSON.stringify({ length, sha256: hash.digest("hex") }));
  });
}
