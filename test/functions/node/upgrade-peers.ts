import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { closeAfterEach, closeServer, listen, type Router, send, startNodeRouterOver } from "../harness.js";

/** RFC 6455 §1.3: the accept value is base64(SHA-1(key + this GUID)). */
const WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

export function websocketAccept(key: string): string {
  return createHash("sha1").update(`${key}${WEBSOCKET_GUID}`).digest("base64");
}

export interface SeenUpgrade {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  readonly rawHeaders: readonly string[];
}

/** What a backend does with an upgrade request: switch and echo, or write this raw answer instead. */
export type UpgradeBehaviour = { readonly kind: "echo" } | { readonly kind: "answer"; readonly raw: string };

export interface UpgradeBackend {
  readonly host: string;
  readonly port: number;
  /** Every upgrade request it got. */
  readonly seen: SeenUpgrade[];
  /** TCP connections it accepted (a backend never touched has 0). */
  readonly connections: () => number;
  /** The upgraded sockets, for a test to close from the backend's side. */
  readonly sockets: Socket[];
  close(): Promise<void>;
}

/**
 * A tiny WebSocket-ish backend on a loopback address: answers an upgrade with 101 and a correct
 * Sec-WebSocket-Accept, writes `hello from <name>;` in the same packet as the head, then echoes every
 * byte it gets (no framing: the router must not care). Anything but an upgrade gets 426.
 */
export async function startUpgradeBackend(
  host: "127.0.0.1" | "::1",
  name: string,
  behaviour: UpgradeBehaviour = { kind: "echo" },
): Promise<UpgradeBackend> {
  const seen: SeenUpgrade[] = [];
  const sockets: Socket[] = [];
  let connections = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    res.writeHead(426, { upgrade: "websocket", connection: "upgrade" }).end();
  });
  server.on("connection", () => {
    connections++;
  });
  server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    seen.push({
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      rawHeaders: req.rawHeaders,
    });
    socket.on("error", () => undefined);
    if (behaviour.kind === "answer") {
      // Written without closing: the router must find the end of the answer from its framing.
      socket.write(behaviour.raw);
      sockets.push(socket);
      return;
    }
    const key = req.headers["sec-websocket-key"] ?? "";
    socket.write(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Accept: ${websocketAccept(key)}\r\nX-Backend: ${name}\r\n\r\nhello from ${name};`,
    );
    sockets.push(socket);
    if (head.length > 0) socket.write(head);
    socket.on("data", (chunk: Buffer) => socket.write(chunk));
    socket.on("end", () => socket.end());
  });
  await listen(server, host);
  return {
    host,
    port: (server.address() as AddressInfo).port,
    seen,
    connections: () => connections,
    sockets,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await closeServer(server);
    },
  };
}

export const CLIENT_KEY = "dGhlIHNhbXBsZSBub25jZQ==";

export interface UpgradeClient {
  readonly socket: Socket;
  /** Everything received so far, head included. */
  text(): string;
  /** Resolves once the connection is fully closed. */
  readonly closed: Promise<void>;
  /** Waits until the received text satisfies `predicate`. */
  until(predicate: (text: string) => boolean, what: string): Promise<string>;
  /** The response head once it arrived: status, lower-cased headers, what followed it. */
  head(): Promise<{ status: number; headers: Record<string, string>; rest: string }>;
  close(): Promise<void>;
}

/**
 * A raw client on 127.0.0.1 that sends an upgrade request head (and `early` bytes in the same write, as a
 * client that does not wait for the 101 would), then records everything it receives.
 */
export function openUpgrade(
  port: number,
  options: { host?: string; path?: string; headers?: readonly [string, string][]; early?: string } = {},
): UpgradeClient {
  const socket = connect(port, "127.0.0.1");
  let received = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    received += chunk;
  });
  socket.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const lines = [
    `GET ${options.path ?? "/chat"} HTTP/1.1`,
    `Host: ${options.host ?? "app.example"}`,
    "Connection: Upgrade",
    "Upgrade: websocket",
    "Sec-WebSocket-Version: 13",
    `Sec-WebSocket-Key: ${CLIENT_KEY}`,
    ...(options.headers ?? []).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.write(`${lines.join("\r\n")}\r\n\r\n${options.early ?? ""}`);
  const until = async (predicate: (text: string) => boolean, what: string) => {
    const deadline = Date.now() + 10_000;
    while (!predicate(received)) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(received)}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return received;
  };
  return {
    socket,
    text: () => received,
    closed,
    until,
    async head() {
      const text = await until((t) => t.includes("\r\n\r\n"), "the response head");
      const end = text.indexOf("\r\n\r\n");
      const [statusLine = "", ...fieldLines] = text.slice(0, end).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of fieldLines) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      return { status: Number(statusLine.split(" ")[1]), headers, rest: text.slice(end + 4) };
    },
    close: async () => {
      socket.destroy();
      await closed;
    },
  };
}

/**
 * What every upgrade test starts, each closed after the test, newest first: upgrade backends, Node routers
 * (startNodeRouterOver) and upgrade clients. `closing` takes anything else with a close().
 */
export function upgradeTestKit() {
  const closing = closeAfterEach();
  return {
    closing,
    backend: (...args: Parameters<typeof startUpgradeBackend>): Promise<UpgradeBackend> =>
      closing(startUpgradeBackend(...args)),
    router: (...args: Parameters<typeof startNodeRouterOver>): Promise<Router> =>
      closing(startNodeRouterOver(...args)),
    client: (...args: Parameters<typeof openUpgrade>): UpgradeClient => {
      const opened = openUpgrade(...args);
      void closing(Promise.resolve(opened));
      return opened;
    },
  };
}

/** The router's Prometheus text (ADMIN_TOKEN of the test config). */
export async function metricsOf(port: number): Promise<string> {
  const res = await send(port, {
    path: "/_edgeslice/metrics",
    headers: { authorization: "Bearer secret-token" },
  });
  return res.body;
}

/** Resolves once `predicate` holds, polling; bounded. */
export async function eventually(predicate: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
