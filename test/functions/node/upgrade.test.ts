import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { describe, expect, it } from "vitest";
import { parseRouterConfig, type RouterConfig } from "../../../functions/core/config.js";
import { startNodeRouter } from "../../../functions/node/server.js";
import { incomingUrl } from "../../../functions/node/upgrade.js";
import { silentLogger } from "../../../lib/logger.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { freePort } from "../../support/redis.js";
import { endpointOn, ep, publish, serviceRecord } from "../fixtures.js";
import {
  closeAfterEach,
  closeServer,
  listen,
  type Router,
  send,
  startNodeRouterOver,
  testConfig,
} from "../harness.js";
import {
  CLIENT_KEY,
  openUpgrade,
  startUpgradeBackend,
  type UpgradeBackend,
  type UpgradeClient,
  websocketAccept,
} from "./upgrade-peers.js";

/** HTTP/1.1 Upgrade (WebSocket) through the Node router (node-upgrade.ts), over real loopback sockets. */
const closing = closeAfterEach();

function backend(...args: Parameters<typeof startUpgradeBackend>): Promise<UpgradeBackend> {
  return closing(startUpgradeBackend(...args));
}

function router(...args: Parameters<typeof startNodeRouterOver>): Promise<Router> {
  return closing(startNodeRouterOver(...args));
}

function client(...args: Parameters<typeof openUpgrade>): UpgradeClient {
  const opened = openUpgrade(...args);
  void closing(Promise.resolve(opened));
  return opened;
}

async function metricsOf(port: number): Promise<string> {
  const res = await send(port, {
    path: "/_edgeslice/metrics",
    headers: { authorization: "Bearer secret-token" },
  });
  return res.body;
}

async function eventually(predicate: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.each(["127.0.0.1", "::1"] as const)("an upgrade to a backend on %s", (family) => {
  it("reaches the backend listed for its Host and carries bytes both ways, those sent right after the head included", async () => {
    const chat = await backend(family, "chat");
    const other = await backend(family, "other");
    const r = await router({ config: { ipFamily: family === "::1" ? "IPv6" : "IPv4" } });
    await publish(r.store, serviceRecord({ cluster: "a", hosts: ["chat.example"], ...endpointOn(chat) }));
    await publish(
      r.store,
      serviceRecord({
        cluster: "a",
        service: "default/other",
        hosts: ["other.example"],
        ...endpointOn(other),
      }),
    );

    const c = client(r.port, { host: "chat.example", path: "/room/1?x=y", early: "early-bytes;" });
    const head = await c.head();
    expect(head.status).toBe(101);
    expect(head.headers["sec-websocket-accept"]).toBe(websocketAccept(CLIENT_KEY));
    expect([head.headers.upgrade, head.headers.connection?.toLowerCase()]).toEqual(["websocket", "upgrade"]);
    await c.until(
      (t) => t.endsWith("hello from chat;early-bytes;"),
      "the greeting and the echoed early bytes",
    );
    c.socket.write("ping;");
    await c.until((t) => t.endsWith("early-bytes;ping;"), "the echo of a later write");

    expect(chat.seen.map((s) => [s.method, s.url, s.headers.host])).toEqual([
      ["GET", "/room/1?x=y", "chat.example"],
    ]);
    expect(other.connections()).toBe(0);
  });
});

describe("an upgrade through the Node router", () => {
  it("for a host no Service exposes gets 404 no_route and never touches any backend", async () => {
    const canary = await backend("127.0.0.1", "canary");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", hosts: ["app.example"], ...endpointOn(canary) }));

    const c = client(r.port, { host: "unknown.example" });
    const head = await c.head();
    await c.closed;

    expect([
      head.status,
      head.headers["content-type"],
      JSON.parse(c.text().split("\r\n\r\n")[1] ?? ""),
    ]).toEqual([404, "application/json", { error: "no_route" }]);
    expect(canary.connections()).toBe(0);
  });

  it("to the reserved admin prefix gets 404 no_route and never reaches a backend", async () => {
    const canary = await backend("127.0.0.1", "canary");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ...endpointOn(canary) }));

    for (const path of ["/_edgeslice/metrics", "/%5Fedgeslice/healthz"]) {
      const c = client(r.port, { path });
      expect((await c.head()).status).toBe(404);
      await c.closed;
    }
    expect(canary.connections()).toBe(0);
  });

  it("for a Service without endpoints gets 503 no_endpoints with Retry-After", async () => {
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a" }));

    const c = client(r.port);
    const head = await c.head();
    await c.closed;

    expect([head.status, head.headers["retry-after"], head.rest]).toEqual([
      503,
      "5",
      '{"error":"no_endpoints"}',
    ]);
  });

  it("tries the next backend when the first refuses the connection, and counts the connect failure", async () => {
    const live = await backend("127.0.0.1", "live");
    const dead = ep("127.0.0.1", await freePort());
    const r = await router({ random: () => 0, ejection: { consecutiveFailures: 1_000 } });
    await publish(r.store, serviceRecord({ cluster: "a", ipv4: [dead, ep(live.host, live.port)] }));

    const c = client(r.port);
    expect((await c.head()).status).toBe(101);
    await c.until((t) => t.endsWith("hello from live;"), "the live backend's greeting");

    const metrics = await metricsOf(r.port);
    expect(metrics).toContain('edgeslice_upstream_errors_total{kind="connect"} 1');
    expect(metrics).toContain("edgeslice_retries_total 1");
  });

  it("gets 502 bad_gateway when every backend refuses the connection", async () => {
    const r = await router({ ejection: { consecutiveFailures: 1_000 } });
    await publish(
      r.store,
      serviceRecord({
        cluster: "a",
        ipv4: [ep("127.0.0.1", await freePort()), ep("127.0.0.1", await freePort())],
      }),
    );

    const c = client(r.port);
    const head = await c.head();
    await c.closed;
    expect([head.status, head.rest]).toEqual([502, '{"error":"bad_gateway"}']);
  });

  it("gets 504 upstream_timeout from a backend that accepts but never answers, and is not retried elsewhere", async () => {
    const silent = createServer();
    const held: Socket[] = [];
    silent.on("connection", (socket: Socket) => {
      held.push(socket);
    });
    // Takes the upgrade and says nothing: no 101, no refusal.
    silent.on("upgrade", () => undefined);
    await listen(silent, "127.0.0.1");
    void closing(
      Promise.resolve({
        close: () => {
          for (const socket of held) socket.destroy();
          return closeServer(silent);
        },
      }),
    );
    const spare = await backend("127.0.0.1", "spare");
    // Long enough that a stalled event loop cannot pass the connect itself for a timeout (which may be retried).
    const r = await router({ random: () => 0, config: { tryTimeoutMs: 1_000 } });
    await publish(
      r.store,
      serviceRecord({
        cluster: "a",
        ipv4: [ep("127.0.0.1", (silent.address() as AddressInfo).port), ep(spare.host, spare.port)],
      }),
    );

    const c = client(r.port);
    const head = await c.head();
    await c.closed;
    expect([head.status, head.rest]).toEqual([504, '{"error":"upstream_timeout"}']);
    expect([held.length, spare.connections()]).toEqual([1, 0]);
  });

  it("relays a backend's 403 that declines the upgrade, then closes the client's connection", async () => {
    const refusing = await backend("127.0.0.1", "refusing", {
      kind: "answer",
      raw: "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 6\r\nConnection: keep-alive\r\n\r\nno way",
    });
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ...endpointOn(refusing) }));

    const c = client(r.port);
    await c.closed;
    const [head = "", body] = c.text().split("\r\n\r\n");
    expect(head.split("\r\n")[0]).toBe("HTTP/1.1 403 Forbidden");
    expect(head.toLowerCase()).toContain("connection: close");
    expect(body).toBe("no way");
  });

  it("relays a chunked refusal whole, delimited by the close", async () => {
    const refusing = await backend("127.0.0.1", "refusing", {
      kind: "answer",
      raw: "HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nlogin\r\n6\r\n first\r\n0\r\n\r\n",
    });
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ...endpointOn(refusing) }));

    const c = client(r.port);
    await c.closed;
    const [head = "", body] = c.text().split("\r\n\r\n");
    expect(head.split("\r\n")[0]).toBe("HTTP/1.1 401 Unauthorized");
    expect(head.toLowerCase()).not.toContain("transfer-encoding");
    expect(body).toBe("login first");
  });

  it("closes the client's connection when the backend closes the upgraded one", async () => {
    const chat = await backend("127.0.0.1", "chat");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ...endpointOn(chat) }));

    const c = client(r.port);
    await c.until((t) => t.endsWith("hello from chat;"), "the greeting");
    chat.sockets[0]?.end("bye;");
    await c.closed;
    expect(c.text().endsWith("hello from chat;bye;")).toBe(true);
  });

  it("closes the backend's connection when the client closes the upgraded one", async () => {
    const chat = await backend("127.0.0.1", "chat");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ...endpointOn(chat) }));

    const c = client(r.port);
    await c.until((t) => t.endsWith("hello from chat;"), "the greeting");
    const upstream = chat.sockets[0];
    if (!upstream) throw new Error("no upgraded socket at the backend");
    const backendClosed = new Promise<void>((resolve) => upstream.once("close", () => resolve()));
    c.socket.destroy();
    await backendClosed;
  });

  it("sets X-Forwarded-For and Forwarded, keeps Host, and strips hop-by-hop fields other than Upgrade and Connection", async () => {
    const chat = await backend("127.0.0.1", "chat");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ...endpointOn(chat) }));

    const c = client(r.port, {
      headers: [
        ["Keep-Alive", "timeout=5"],
        ["TE", "trailers"],
        ["Proxy-Authorization", "Basic eDp5"],
        ["X-Forwarded-For", "203.0.113.9"],
        ["X-Hop", "secret"],
        ["Connection", "X-Hop"],
        ["Origin", "http://app.example"],
      ],
    });
    expect((await c.head()).status).toBe(101);

    const seen = chat.seen[0]?.headers;
    expect(seen?.host).toBe("app.example");
    expect(seen?.["x-forwarded-for"]).toBe("203.0.113.9, 127.0.0.1");
    expect(seen?.forwarded).toBe("for=127.0.0.1;host=app.example;proto=http");
    expect([seen?.["x-forwarded-proto"], seen?.["x-forwarded-host"]]).toEqual(["http", "app.example"]);
    expect([seen?.upgrade, seen?.connection]).toEqual(["websocket", "upgrade"]);
    expect([seen?.["sec-websocket-key"], seen?.["sec-websocket-version"], seen?.origin]).toEqual([
      CLIENT_KEY,
      "13",
      "http://app.example",
    ]);
    for (const name of ["keep-alive", "te", "proxy-authorization", "x-hop"])
      expect(seen?.[name]).toBeUndefined();
  });

  it("refuses an upgrade request that declares a body with 400 and never touches a backend", async () => {
    const canary = await backend("127.0.0.1", "canary");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ...endpointOn(canary) }));

    const c = client(r.port, { headers: [["Content-Length", "4"]], early: "abcd" });
    const head = await c.head();
    await c.closed;
    expect([head.status, head.rest]).toEqual([400, '{"error":"bad_request"}']);
    expect(canary.connections()).toBe(0);
  });

  it("sends new upgrades to the backend holding fewer open upgraded connections", async () => {
    const a = await backend("127.0.0.1", "a");
    const b = await backend("127.0.0.1", "b");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ipv4: [ep(a.host, a.port), ep(b.host, b.port)] }));
    const greeter = async (c: UpgradeClient) => {
      const text = await c.until((t) => /hello from \w+;/.test(t), "the greeting");
      return /hello from (\w+);/.exec(text)?.[1];
    };
    const held = client(r.port);
    const busy = await greeter(held);

    // Each later connection opens while `held` is still open and closes before the next one: with the
    // tunnel counted on its backend, power-of-two-choices over two backends must pick the other one every
    // time (a random pick would match that six times in a row once in 64 runs).
    const chosen: (string | undefined)[] = [];
    for (let round = 0; round < 6; round++) {
      const c = client(r.port);
      chosen.push(await greeter(c));
      await c.close();
      await eventually(
        async () => (await metricsOf(r.port)).includes("edgeslice_upgraded_connections 1"),
        "the short tunnel to be released",
      );
    }
    expect(busy).toMatch(/^[ab]$/);
    expect(chosen).toEqual(Array(6).fill(busy === "a" ? "b" : "a"));
  });

  it("counts a switch as a 1xx response and shows open upgraded connections", async () => {
    const chat = await backend("127.0.0.1", "chat");
    const r = await router();
    await publish(r.store, serviceRecord({ cluster: "a", ...endpointOn(chat) }));

    const c = client(r.port);
    await c.until((t) => t.endsWith("hello from chat;"), "the greeting");
    const during = await metricsOf(r.port);
    await c.close();
    await eventually(() => chat.sockets.every((s) => s.destroyed), "the backend side to close");

    expect(during).toContain('edgeslice_requests_total{class="1xx"} 1');
    expect(during).toContain("edgeslice_upgraded_connections 1");
    await eventually(
      async () => (await metricsOf(r.port)).includes("edgeslice_upgraded_connections 0"),
      "the gauge to drop",
    );
  });
});

describe("the Node router's close()", () => {
  it("ends upgraded connections once its drain bound is over", async () => {
    const chat = await backend("127.0.0.1", "chat");
    const store = new MemoryStore();
    const config: RouterConfig = { ...parseRouterConfig({ PORT: "0", LOG_LEVEL: "error" }), ...testConfig };
    const r = await startNodeRouter(config, {
      source: store,
      host: "127.0.0.1",
      logger: silentLogger,
      drainMs: 100,
    });
    let closed = false;
    void closing(
      Promise.resolve({
        close: async () => {
          if (!closed) await r.close();
        },
      }),
    );
    await publish(store, serviceRecord({ cluster: "a", ...endpointOn(chat) }));

    const c = client(r.port);
    await c.until((t) => t.endsWith("hello from chat;"), "the greeting");
    const upstream = chat.sockets[0];
    if (!upstream) throw new Error("no upgraded socket at the backend");
    const backendClosed = new Promise<void>((resolve) => upstream.once("close", () => resolve()));

    await r.close();
    closed = true;
    await c.closed;
    await backendClosed;
  });
});

/** The upgrade path must route on exactly the URL the Hono app would have seen (node-upgrade.ts incomingUrl). */
describe("incomingUrl", () => {
  it.each([
    ["/chat", "app.example", "http://app.example/chat"],
    ["/a/../b/./c?q=1", "app.example", "http://app.example/b/c?q=1"],
    ["/%2e%2e/x", "app.example", "http://app.example/x"],
    ["/chat", "App.Example:8080", "http://app.example:8080/chat"],
    ["/x", "[::1]:9000", "http://[::1]:9000/x"],
    ["http://abs.example/p?q", "ignored.example", "http://abs.example/p?q"],
    ["/p", "a@b.example", "refused"],
    ["/p\\q", "app.example", "refused"],
    ["/p?x=\\", "app.example", "http://app.example/p?x=\\"],
  ])("for target %j and Host %j is %j, as @hono/node-server builds it", async (target, host, expected) => {
    let fromHono: string | undefined;
    let fromUpgrade: string | undefined;
    const listener = getRequestListener((request: Request) => {
      fromHono = request.url;
      return new Response("ok");
    });
    const server: Server = createServer((req, res) => {
      fromUpgrade = incomingUrl(req) ?? "refused";
      fromHono = "refused";
      void listener(req, res);
    });
    await listen(server, "127.0.0.1");
    try {
      const port = (server.address() as AddressInfo).port;
      await new Promise<void>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        socket.on("data", () => undefined);
        socket.on("close", () => resolve());
        socket.on("error", () => resolve());
        socket.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      });
    } finally {
      await closeServer(server);
    }
    expect([fromUpgrade, fromHono]).toEqual([expected, expected]);
  });
});
