import { createServer, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { describe, expect, it } from "vitest";
import { requestUrl } from "../../../functions/node/request-url.js";
import { closeServer, listen } from "../harness.js";

/**
 * The Node router routes on the URL the WHATWG parser reads (node/request-url.ts), as Workers and the Hono adapter
 * do: @hono/node-server is the oracle here.
 */
describe("requestUrl", () => {
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
    ["/plain/path?q=1", "app.example:8080", "http://app.example:8080/plain/path?q=1"],
    ["/a", "app.example:80", "http://app.example/a"],
  ])("for target %j and Host %j is %j, as @hono/node-server builds it", async (target, host, expected) => {
    let fromHono: string | undefined;
    let fromUpgrade: string | undefined;
    const listener = getRequestListener((request: Request) => {
      fromHono = request.url;
      return new Response("ok");
    });
    const server: Server = createServer((req, res) => {
      fromUpgrade = requestUrl("http", req.headers.host, req.url) ?? "refused";
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
