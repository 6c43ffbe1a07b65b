import { connect as connectHttp2 } from "node:http2";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { proxyV1, proxyV2 } from "../../lib/proxy-protocol-bytes.js";
import { endpointOn, publish, serviceRecord } from "../fixtures.js";
import { type Backend, type Router, send, startBackend, startNodeRouterOver } from "../harness.js";

/**
 * TRUSTED_PROXIES and PROXY_PROTOCOL on the built Node router: what a backend and the access log see of a
 * client behind a balancer, over raw sockets where the balancer's bytes matter.
 */
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
  vi.restoreAllMocks();
});

async function routerWith(env: Record<string, string>): Promise<{ router: Router; backend: Backend }> {
  const backend = await startBackend("127.0.0.1");
  open.push(backend);
  const { trustedProxies, proxyProtocol } = parseRouterConfig(env);
  const router = await startNodeRouterOver({
    config: { trustedProxies, proxyProtocol, accessLog: { enabled: true, sample: 1 } },
  });
  open.push(router);
  await publish(router.store, serviceRecord({ cluster: "a", ...endpointOn(backend) }));
  return { router, backend };
}

/** The access log's lines as the router writes them to stdout. */
function accessLines(): () => Record<string, unknown>[] {
  const written: string[] = [];
  const original = process.stdout.write.bind(process.stdout) as (chunk: string | Uint8Array) => boolean;
  const write = (chunk: string | Uint8Array) => {
    const text = String(chunk);
    if (!text.includes('"kind":"access"')) return original(chunk);
    written.push(text);
    return true;
  };
  vi.spyOn(process.stdout, "write").mockImplementation(write as typeof process.stdout.write);
  return () =>
    written
      .join("")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Writes `bytes` on a raw connection and reads until the router closes it. */
function rawExchange(port: number, bytes: Uint8Array): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let reply = "";
    socket.setEncoding("utf8");
    socket.setTimeout(10_000, () => socket.destroy(new Error("raw timeout")));
    socket.on("data", (text: string) => {
      reply += text;
    });
    socket.on("close", () => resolve(reply));
    socket.on("error", (error: NodeJS.ErrnoException) =>
      error.code === "ECONNRESET" ? resolve(reply) : reject(error),
    );
    socket.write(bytes);
  });
}

const request = (extra = "") =>
  Buffer.from(`GET /who HTTP/1.1\r\nHost: app.example\r\n${extra}Connection: close\r\n\r\n`);

const withHeader = (header: Uint8Array, rest: Uint8Array) => Buffer.concat([header, rest]);

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("TRUSTED_PROXIES", () => {
  const fromBalancer = {
    "x-forwarded-for": "203.0.113.9",
    "x-forwarded-proto": "https",
    "x-forwarded-host": "shop.example",
  };

  it("keeps a trusted balancer's forwarding fields, extends its X-Forwarded-For, and logs the client it names", async () => {
    const lines = accessLines();
    const { router, backend } = await routerWith({ TRUSTED_PROXIES: "127.0.0.1" });
    expect((await send(router.port, { headers: fromBalancer })).status).toBe(200);
    expect(backend.seen[0]?.headers).toMatchObject({
      "x-forwarded-for": "203.0.113.9, 127.0.0.1",
      "x-forwarded-proto": "https",
      "x-forwarded-host": "shop.example",
      forwarded: "for=127.0.0.1;host=app.example;proto=http",
    });
    await until(() => lines().length > 0);
    expect(lines()[0]?.client).toBe("203.0.113.9");
  });

  it("does the same on the app's path (HEAD) and on an upgrade", async () => {
    const { router, backend } = await routerWith({ TRUSTED_PROXIES: "127.0.0.1" });
    await send(router.port, { method: "HEAD", headers: fromBalancer });
    await rawExchange(
      router.port,
      request(
        "X-Forwarded-For: 203.0.113.9\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Key: a2V5\r\nSec-WebSocket-Version: 13\r\n",
      ),
    );
    expect(backend.seen.map((seen) => seen.headers["x-forwarded-for"])).toEqual([
      "203.0.113.9, 127.0.0.1",
      "203.0.113.9, 127.0.0.1",
    ]);
  });

  it("replaces the fields of a peer it does not trust, and logs the peer", async () => {
    const lines = accessLines();
    const { router, backend } = await routerWith({ TRUSTED_PROXIES: "10.0.0.0/8" });
    await send(router.port, { headers: fromBalancer });
    expect(backend.seen[0]?.headers).toMatchObject({
      "x-forwarded-for": "127.0.0.1",
      "x-forwarded-proto": "http",
      "x-forwarded-host": "app.example",
    });
    await until(() => lines().length > 0);
    expect(lines()[0]?.client).toBe("127.0.0.1");
  });
});

describe("PROXY_PROTOCOL", () => {
  const env = { TRUSTED_PROXIES: "127.0.0.1", PROXY_PROTOCOL: "true" };

  it("takes the client of a trusted balancer's v1 header for X-Forwarded-For and the access log", async () => {
    const lines = accessLines();
    const { router, backend } = await routerWith(env);
    const header = proxyV1("TCP4", ["203.0.113.7", 51000], ["192.0.2.1", 80]);
    // The client behind the balancer is nobody trusted: its own X-Forwarded-For is replaced.
    const reply = await rawExchange(router.port, withHeader(header, request("X-Forwarded-For: 6.6.6.6\r\n")));
    expect(reply).toMatch(/^HTTP\/1.1 200/);
    expect(backend.seen[0]?.headers["x-forwarded-for"]).toBe("203.0.113.7");
    expect(backend.seen[0]?.headers.forwarded).toBe("for=203.0.113.7;host=app.example;proto=http");
    await until(() => lines().length > 0);
    expect(lines()[0]?.client).toBe("203.0.113.7");
  });

  it("reads a v2 header before an HTTP/2 connection's preface (h2c on PORT)", async () => {
    const { router, backend } = await routerWith(env);
    const socket: Socket = connect(router.port, "127.0.0.1");
    socket.write(proxyV2({ source: ["2001:db8::7", 40000], destination: ["2001:db8::1", 80] }));
    const session = connectHttp2(`http://127.0.0.1:${router.port}`, { createConnection: () => socket });
    open.push({ close: () => new Promise<void>((resolve) => session.close(() => resolve())) });
    const status = await new Promise<number>((resolve, reject) => {
      const stream = session.request({ ":path": "/who", ":authority": "app.example" });
      stream.on("response", (headers) => resolve(Number(headers[":status"])));
      stream.on("error", reject);
      stream.resume();
      stream.end();
    });
    expect(status).toBe(200);
    expect(backend.seen[0]?.headers["x-forwarded-for"]).toBe("2001:db8::7");
  });

  it("serves a trusted peer's connection that carries no header", async () => {
    const { router, backend } = await routerWith(env);
    expect((await send(router.port, {})).status).toBe(200);
    expect(backend.seen[0]?.headers["x-forwarded-for"]).toBe("127.0.0.1");
  });

  it.each([
    [
      "an untrusted peer's header",
      { TRUSTED_PROXIES: "10.0.0.0/8", PROXY_PROTOCOL: "true" },
      proxyV1("TCP4", ["203.0.113.7", 1], ["192.0.2.1", 80]),
      "untrusted",
    ],
    [
      "a truncated v1 header",
      env,
      new TextEncoder().encode("PROXY TCP4 203.0.113.7 192.0.2.1 1\r\n"),
      "malformed",
    ],
    [
      "a malformed v2 header",
      env,
      proxyV2({ source: ["203.0.113.7", 1], destination: ["192.0.2.1", 2], command: 7 }),
      "malformed",
    ],
  ])(
    "closes the connection on %s, before any request, and counts it",
    async (_what, settings, header, reason) => {
      const { router, backend } = await routerWith(settings);
      expect(await rawExchange(router.port, withHeader(header, request()))).toBe("");
      expect(backend.seen).toEqual([]);
      const metrics = await send(router.adminPort, {
        path: "/_edgeslice/metrics",
        headers: { authorization: "Bearer secret-token" },
      });
      expect(metrics.body).toContain(`edgeslice_proxy_protocol_refusals_total{reason="${reason}"} 1`);
    },
  );
});
