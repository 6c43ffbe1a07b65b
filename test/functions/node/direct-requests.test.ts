import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../../store/memory-store.js";
import type { SnapshotSource } from "../../../store/store.js";
import { routeRecord, routeRule } from "../../e2e/support/contract-layout.js";
import { freePort } from "../../support/redis.js";
import { publish, serviceRecord, snapshotOf } from "../fixtures.js";
import { closeAfterEach, type Router, startBackend, startNodeRouterOver } from "../harness.js";
import { rawBackend, rawExchange, statusLineOf } from "./hostile-kit.js";

/**
 * node/direct-requests.ts serves plain requests without the Hono app. A Host in capitals takes the app (the
 * adapter's URL parser lowercases it), a lowercase one the direct path: both must answer alike.
 */
const closing = closeAfterEach();

async function routerWith(endpoint: { ip: string; port: number }): Promise<Router> {
  const r = await closing(startNodeRouterOver({ config: { retries: 0 } }));
  await publish(r.store, serviceRecord({ cluster: "a", ipv4: [endpoint] }));
  return r;
}

/** A raw reply without its Date line (the one field that differs from one second to the next). */
function withoutDate(reply: Buffer): string {
  return reply
    .toString("latin1")
    .split("\r\n")
    .filter((line) => !line.toLowerCase().startsWith("date:"))
    .join("\r\n");
}

const requestTo = (host: string, extra = "") =>
  `GET /x?y=1 HTTP/1.1\r\nhost: ${host}\r\nx-request-id: id-1\r\n${extra}connection: close\r\n\r\n`;

describe("node direct path", () => {
  it("answers an unknown host with the same bytes as the app does", async () => {
    const r = await routerWith({ ip: "127.0.0.1", port: await freePort() });
    const direct = await rawExchange(r.port, requestTo("unknown.example"));
    const app = await rawExchange(r.port, requestTo("UNKNOWN.example"));
    expect(statusLineOf(direct)).toBe("HTTP/1.1 404 Not Found");
    expect(withoutDate(direct)).toBe(withoutDate(app));
  });

  it("routes through a source whose snapshot comes as a promise as it does through one held in memory", async () => {
    const b = await closing(rawBackend(Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")));
    const store = new MemoryStore();
    const source: SnapshotSource = { current: async () => store.current() };
    const r = await closing(startNodeRouterOver({ store, source, config: { retries: 0 } }));
    await publish(store, serviceRecord({ cluster: "a", ipv4: [{ ip: b.host, port: b.port }] }));
    const reply = (await rawExchange(r.port, requestTo("app.example"))).toString("latin1");
    expect(reply.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
    expect(reply.endsWith("\r\n\r\nok")).toBe(true);
    const unknown = await rawExchange(r.port, requestTo("unknown.example"));
    expect(statusLineOf(unknown)).toBe("HTTP/1.1 404 Not Found");
  });

  it("answers a backend that refuses connections with the same bytes as the app does", async () => {
    const r = await routerWith({ ip: "127.0.0.1", port: await freePort() });
    const direct = await rawExchange(r.port, requestTo("app.example"));
    const app = await rawExchange(r.port, requestTo("APP.example"));
    expect(statusLineOf(direct)).toBe("HTTP/1.1 502 Bad Gateway");
    expect(withoutDate(direct)).toBe(withoutDate(app));
  });

  it("relays the backend's fields in its order, a repeated one line by line, without Connection-listed ones, and with the router's X-Request-Id in place of the backend's", async () => {
    const b = await closing(
      rawBackend(
        Buffer.from(
          "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nX-Trace: t\r\nSet-Cookie: b=2\r\nConnection: keep-alive, X-Secret\r\nX-Secret: s\r\nX-Request-Id: backend-id\r\nContent-Length: 2\r\n\r\nok",
        ),
      ),
    );
    const r = await routerWith({ ip: b.host, port: b.port });
    for (const host of ["app.example", "APP.example"]) {
      const lines = (await rawExchange(r.port, requestTo(host))).toString("latin1").split("\r\n");
      const fields = lines.filter((line) => /^(set-cookie|x-trace|x-secret|x-request-id):/i.test(line));
      expect(fields).toEqual(["set-cookie: a=1", "x-trace: t", "set-cookie: b=2", "x-request-id: id-1"]);
      expect(lines.at(-1)).toBe("ok");
    }
  });

  it("answers 500 Internal Server Error, not the redirect's reason phrase, when it cannot write a redirect's Location", async () => {
    // Only a source that skips record decoding (store/routes.ts refuses such a path) can hold this route.
    const snapshot = snapshotOf([
      {
        name: "a",
        routes: [
          routeRecord("httproute:shop/bad", {
            hostnames: ["app.example"],
            rules: [
              routeRule([], {
                filters: {
                  redirect: { statusCode: 302, path: { type: "ReplaceFullPath", value: "/a\r\nx: 1" } },
                },
              }),
            ],
          }),
        ],
      },
    ]);
    const r = await closing(
      startNodeRouterOver({ source: { current: () => snapshot }, config: { retries: 0 } }),
    );
    const reply = await rawExchange(r.port, requestTo("app.example"));
    expect(statusLineOf(reply)).toBe("HTTP/1.1 500 Internal Server Error");
  });

  it("closes the connection of a client that never finishes a body the router answered without reading", async () => {
    const r = await routerWith({ ip: "127.0.0.1", port: await freePort() });
    for (const host of ["unknown.example", "UNKNOWN.example"]) {
      const socket = connect(r.port, "127.0.0.1");
      socket.on("error", () => undefined);
      let reply = "";
      socket.on("data", (chunk: Buffer) => (reply += chunk.toString("latin1")));
      // The router's side ending ('end'), not the bound below, is what the test waits for.
      const routerClosed = new Promise<boolean>((resolve) => {
        socket.once("end", () => resolve(true));
        setTimeout(() => resolve(false), 5_000);
      });
      // 1 MB announced, 10 bytes sent, and the client never sends the rest nor closes.
      socket.write(`POST / HTTP/1.1\r\nhost: ${host}\r\ncontent-length: 1000000\r\n\r\n0123456789`);
      const closedByRouter = await routerClosed;
      socket.destroy();
      expect([closedByRouter, statusLineOf(Buffer.from(reply, "latin1"))]).toEqual([
        true,
        "HTTP/1.1 404 Not Found",
      ]);
    }
  });

  it("stops reading the backend while a client does not read, and relays the whole body once it does", async () => {
    const total = 32 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, "b");
    let written = 0;
    const b = await closing(
      startBackend("127.0.0.1", async (_req, res) => {
        res.writeHead(200, { "content-length": String(total) });
        while (written < total) {
          written += chunk.length;
          if (!res.write(chunk)) await new Promise((resolve) => res.once("drain", resolve));
        }
        res.end();
      }),
    );
    const r = await routerWith({ ip: b.host, port: b.port });
    const socket = connect(r.port, "127.0.0.1");
    socket.pause();
    socket.write("GET /big HTTP/1.1\r\nhost: app.example\r\nconnection: close\r\n\r\n");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Socket buffers on both connections hold a few MiB at most; without back-pressure the router would have
    // read all 32 MiB by now.
    const writtenWhilePaused = written;
    let received = 0;
    socket.on("data", (data: Buffer) => (received += data.length));
    socket.resume();
    await new Promise((resolve) => socket.once("close", resolve));
    expect(writtenWhilePaused).toBeLessThan(total / 2);
    expect(received).toBeGreaterThan(total);
  });
});
