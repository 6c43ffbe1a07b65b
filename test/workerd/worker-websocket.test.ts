import type { Miniflare } from "miniflare";
import { describe, expect, it } from "vitest";
import type { EndpointRecord } from "../../store/records.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { serviceRecord } from "../functions/fixtures.js";
import { REDIS_URL } from "../support/redis.js";
import { startWebSocketBackend, type WebSocketBackend } from "./websocket-backend.js";
import { CLUSTER, workerFixture } from "./worker-fixture.js";

/** WebSocket pass-through on the Workers path (app/web-proxy.ts, transports/fetch.ts), in real workerd. */
const { redis, freshPrefix, worker, closesAfterEach } = workerFixture("workerd-ws");

type ClientSocket = NonNullable<Awaited<ReturnType<Miniflare["dispatchFetch"]>>["webSocket"]>;

/** Accepts the client end of the WebSocket and records its messages and its close. */
function follow(socket: ClientSocket) {
  const messages: string[] = [];
  let closeCode: number | undefined;
  socket.addEventListener("message", (event) => {
    messages.push(String(event.data));
  });
  socket.addEventListener("close", (event) => {
    closeCode = event.code;
  });
  socket.accept();
  const until = async (predicate: () => boolean, what: string) => {
    const deadline = Date.now() + 10_000;
    while (!predicate()) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(messages)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  return { messages, until, closeCode: () => closeCode };
}

describe("WebSocket handshakes through the Worker bundle in workerd", () => {
  const publish = async (
    records: { service: string; hosts: string[]; ipv4?: EndpointRecord[]; ipv6?: EndpointRecord[] }[],
  ) => {
    const prefix = freshPrefix();
    const writer = createRedisWriter(redis(), { prefix, cluster: CLUSTER });
    await writer.heartbeat({ holder: "test", leaseMs: 120_000, at: Date.now() });
    for (const record of records) await writer.put(serviceRecord({ cluster: CLUSTER, ...record }));
    return worker({ REDIS_URL, EDGESLICE_PREFIX: prefix });
  };
  const backend = async (...args: Parameters<typeof startWebSocketBackend>) =>
    closesAfterEach(await startWebSocketBackend(...args));
  const at = (b: WebSocketBackend): EndpointRecord => ({ ip: b.ip, port: b.port });

  it.each(["127.0.0.1", "::1"] as const)(
    "reaches the backend on %s listed for its Host, and messages flow both ways",
    async (ip) => {
      const chat = await backend(ip, "chat");
      const other = await backend(ip, "other");
      const family = ip === "::1" ? "ipv6" : "ipv4";
      const mf = await publish([
        { service: "shop/chat", hosts: ["chat.example.test"], [family]: [at(chat)] },
        { service: "shop/other", hosts: ["other.example.test"], [family]: [at(other)] },
      ]);

      const response = await mf.dispatchFetch("http://chat.example.test/room/1?x=y", {
        headers: { upgrade: "websocket" },
      });
      expect(response.status).toBe(101);
      const socket = response.webSocket;
      if (!socket) throw new Error("no webSocket on the 101");
      const client = follow(socket);
      await client.until(() => client.messages.includes("hello from chat"), "the backend's greeting");
      socket.send("ping");
      await client.until(() => client.messages.includes("echo: ping"), "the echo");

      expect(chat.seen.map((s) => s.url)).toEqual(["/room/1?x=y"]);
      expect(chat.seen[0]?.headers["x-forwarded-host"]).toBe("chat.example.test");
      // Miniflare sets CF-Connecting-IP to the loopback client.
      expect(chat.seen[0]?.headers["x-forwarded-for"]).toBe("127.0.0.1");
      expect(chat.seen[0]?.headers.forwarded).toBe("for=127.0.0.1;host=chat.example.test;proto=http");
      expect(other.connections()).toBe(0);
      socket.close(1000, "done");
      await chat.closed;
    },
  );

  it("hands a backend's 403 that declines the handshake to the client", async () => {
    const refusing = await backend(
      "127.0.0.1",
      "refusing",
      "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nno way",
    );
    const mf = await publish([{ service: "shop/chat", hosts: ["chat.example.test"], ipv4: [at(refusing)] }]);

    const response = await mf.dispatchFetch("http://chat.example.test/", {
      headers: { upgrade: "websocket" },
    });

    expect([response.status, await response.text(), response.webSocket]).toEqual([403, "no way", null]);
  });

  it("answers 404 no_route for a host no Service exposes, touching no backend", async () => {
    const canary = await backend("127.0.0.1", "canary");
    const mf = await publish([{ service: "shop/chat", hosts: ["chat.example.test"], ipv4: [at(canary)] }]);

    const response = await mf.dispatchFetch("http://unknown.example.test/", {
      headers: { upgrade: "websocket" },
    });

    expect([response.status, await response.json()]).toEqual([
      404,
      { error: "no_route", requestId: expect.any(String) },
    ]);
    expect(canary.connections()).toBe(0);
  });
});
