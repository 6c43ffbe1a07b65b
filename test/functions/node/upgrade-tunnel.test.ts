import { describe, expect, it } from "vitest";
import { parseRouterConfig, type RouterConfig } from "../../../functions/core/settings/config.js";
import { startNodeRouter } from "../../../functions/node/server.js";
import { silentLogger } from "../../../lib/logger.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { endpointOn, ep, publish, serviceRecord } from "../fixtures.js";
import { testConfig } from "../harness.js";
import { eventually, metricsOf, type UpgradeClient, upgradeTestKit } from "./upgrade-peers.js";

/**
 * After the backend answered an upgrade through the Node router (node/upgrade.ts, node/tunnel.ts): a
 * declined answer relayed then closed, an open tunnel's life and close, its count for balancing and
 * metrics, and the router's close().
 */
const { closing, backend, router, client } = upgradeTestKit();

describe("an upgrade through the Node router", () => {
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
        async () => (await metricsOf(r.adminPort)).includes("edgeslice_upgraded_connections 1"),
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
    const during = await metricsOf(r.adminPort);
    await c.close();
    await eventually(() => chat.sockets.every((s) => s.destroyed), "the backend side to close");

    expect(during).toContain('edgeslice_requests_total{class="1xx"} 1');
    expect(during).toContain("edgeslice_upgraded_connections 1");
    await eventually(
      async () => (await metricsOf(r.adminPort)).includes("edgeslice_upgraded_connections 0"),
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
