import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import { afterEach } from "vitest";
import { type AppDeps, createApp } from "../../functions/app/app.js";
import { parseRouterConfig, type RouterConfig } from "../../functions/core/settings/config.js";
import { startNodeRouter } from "../../functions/node/server.js";
import { createFetchUpstream } from "../../functions/transports/fetch.js";
import type { Upstream } from "../../functions/transports/upstream.js";
import { silentLogger } from "../../lib/logger.js";
import { MemoryStore } from "../../store/memory-store.js";
import type { SnapshotSource } from "../../store/store.js";

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
}

export interface Backend {
  readonly host: string;
  readonly port: number;
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A real HTTP backend on a loopback address and port 0 that records every request it gets. */
export async function startBackend(
  host: "127.0.0.1" | "::1",
  handler: Handler = okHandler,
): Promise<Backend> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    handler(req, res);
  });
  await listen(server, host);
  return { host, port: (server.address() as AddressInfo).port, seen, close: () => closeServer(server) };
}

export const okHandler: Handler = (req, res) => {
  req.resume();
  req.on("end", () => res.end(`ok ${req.method} ${req.url}`));
};

export interface Router {
  readonly port: number;
  /** Where the admin endpoints answer: the Node router's ADMIN_PORT listener, the web path's one port. */
  readonly adminPort: number;
  readonly store: MemoryStore;
  close(): Promise<void>;
}

export const testConfig: AppDeps["config"] = {
  cluster: undefined,
  zone: undefined,
  ipFamily: "PreferIPv4",
  adminToken: "secret-token",
  tryTimeoutMs: 5_000,
  totalTimeoutMs: 10_000,
  retries: 2,
};

export interface RouterOptions {
  store?: MemoryStore;
  /** Replaces the store as the app's snapshot source. */
  source?: SnapshotSource;
  config?: Partial<RouterConfig>;
  random?: () => number;
  upstream?: Upstream;
  ejection?: AppDeps["ejection"];
}

/** The two ways the router proxies: the web path (Workers' shape) and the Node-native fast path. */
export type RouterKind = "web path (fetch transport)" | "node fast path (startNodeRouter)";
export const ROUTER_KINDS: readonly RouterKind[] = [
  "web path (fetch transport)",
  "node fast path (startNodeRouter)",
];

export function startRouterOf(kind: RouterKind, options: RouterOptions = {}): Promise<Router> {
  return kind === "web path (fetch transport)" ? startRouter(options) : startNodeRouterOver(options);
}

/**
 * startNodeRouter exactly as `npm run router` wires it (its own dispatchers; `upstream` is the web path's and not
 * read) over a MemoryStore, on 127.0.0.1:0.
 */
export async function startNodeRouterOver(options: RouterOptions = {}): Promise<Router> {
  const store = options.store ?? new MemoryStore();
  const config: RouterConfig = {
    ...parseRouterConfig({ PORT: "0", LOG_LEVEL: "error" }),
    ...testConfig,
    ...options.config,
  };
  const router = await startNodeRouter(config, {
    source: options.source ?? store,
    host: "127.0.0.1",
    logger: silentLogger,
    drainMs: 200,
    ...(options.random ? { random: options.random } : {}),
    ...(options.ejection ? { ejection: options.ejection } : {}),
  });
  return { port: router.port, adminPort: router.adminPort, store, close: () => router.close() };
}

/** createApp over a MemoryStore and the fetch transport, served by @hono/node-server on 127.0.0.1:0. */
export async function startRouter(options: RouterOptions = {}): Promise<Router> {
  const store = options.store ?? new MemoryStore();
  const app = createApp({
    source: options.source ?? store,
    upstream: options.upstream ?? createFetchUpstream(fetch),
    config: { ...testConfig, ...options.config },
    now: Date.now,
    random: options.random ?? Math.random,
    balancing: "p2c",
    logger: silentLogger,
    clientAddress: (c) => getConnInfo(c).remote.address,
    clientTrusted: (c) => options.config?.trustedProxies?.trusts(getConnInfo(c).remote.address) === true,
    ...(options.ejection ? { ejection: options.ejection } : {}),
  });
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s as Server));
  });
  const { port } = server.address() as AddressInfo;
  return { port, adminPort: port, store, close: () => closeServer(server) };
}

export interface ClientResponse {
  readonly status: number;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

/** One request through node:http so any Host and header can be sent. */
export function send(
  port: number,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string },
): Promise<ClientResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: options.method ?? "GET",
        path: options.path ?? "/",
        headers: { host: "app.example", ...options.headers },
        agent: false,
        timeout: 15_000,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("client timeout")));
    req.end(options.body);
  });
}

/** Writes `text` (which should carry `Connection: close`) on a raw socket (for request targets node:http will not send) and returns the reply. */
export function sendRaw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let reply = "";
    socket.setEncoding("utf8");
    socket.setTimeout(10_000, () => socket.destroy(new Error("raw timeout")));
    socket.on("data", (chunk: string) => {
      reply += chunk;
    });
    socket.on("end", () => resolve(reply));
    socket.on("close", () => resolve(reply));
    socket.on("error", reject);
    socket.write(text);
  });
}

export function listen(server: Server, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Registers an afterEach that closes, newest first, everything the returned function was handed. */
export function closeAfterEach(): <T extends { close(): Promise<void> }>(started: Promise<T>) => Promise<T> {
  const open: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of open.splice(0).reverse()) await close();
  });
  return async (started) => {
    const value = await started;
    open.push(() => value.close());
    return value;
  };
}
