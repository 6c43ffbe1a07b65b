import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createUndiciUpstream } from "../../../functions/transports/undici.js";
import { upstreamRequest } from "./transport.case.js";

/**
 * A response body cancelled while the backend's stream still holds chunks (an HTTP/2 client resetting its
 * stream does this to the web path): the chunks left must be dropped, not enqueued into the closed stream,
 * which threw from the body's 'data' event, uncaught.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("undici upstream response body", () => {
  it("drops the chunks still buffered when the reader cancels right after asking for more", async () => {
    const server: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const chunk = Buffer.alloc(8 * 1024, 1);
      const timer = setInterval(() => res.write(chunk), 1);
      res.on("close", () => clearInterval(timer));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    cleanups.push(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const upstream = createUndiciUpstream();
    cleanups.push(() => upstream.destroy());
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", onUncaught);
    cleanups.push(async () => void process.off("uncaughtException", onUncaught));
    const port = (server.address() as AddressInfo).port;
    for (let i = 0; i < 5; i++) {
      const response = await upstream.send(upstreamRequest({ ip: "127.0.0.1", port }));
      const reader = response.body?.getReader();
      await reader?.read();
      // Let the backend's chunks pile up in the paused body, then ask for one and cancel in the same turn.
      await new Promise((resolve) => setTimeout(resolve, 20));
      void reader?.read().catch(() => undefined);
      await reader?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(uncaught).toEqual([]);
  });
});
