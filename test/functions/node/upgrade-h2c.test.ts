import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { ep, snapshotOf } from "../fixtures.js";
import { closeAfterEach, closeServer, listen, startNodeRouterOver } from "../harness.js";
import { rawExchange } from "./hostile-kit.js";

/**
 * `Upgrade: h2c` on HTTP/1.1 (RFC 7540 §3.2, obsoleted by RFC 9113 §3.1) is never forwarded: the request is
 * served as plain HTTP/1.1, its Upgrade dropped, so no tunnel can carry requests past the route's matches.
 */
const closing = closeAfterEach();

/** A backend that switches to anything asked for (101, then reads the tunnel) and answers plain requests 200. */
async function obligingBackend() {
  const plain: IncomingMessage[] = [];
  const upgrades: IncomingMessage[] = [];
  const tunnelled: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    plain.push(req);
    req.resume();
    res.end(`plain ${req.url}`);
  });
  server.on("upgrade", (req: IncomingMessage, socket: Socket) => {
    upgrades.push(req);
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.write("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n");
    socket.on("data", (chunk: Buffer) => tunnelled.push(chunk.toString("latin1")));
  });
  await listen(server, "127.0.0.1");
  return {
    host: "127.0.0.1",
    port: (server.address() as AddressInfo).port,
    plain,
    upgrades,
    tunnelled,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await closeServer(server);
    },
  };
}

const H2C_UPGRADE =
  "GET /public HTTP/1.1\r\nHost: app.example\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n" +
  "HTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n";
const NEXT = "GET /admin/secret HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n";

describe("an HTTP/1.1 request asking to upgrade to h2c", () => {
  it("is served as plain HTTP/1.1 without its Upgrade, and its connection closes after the answer, tunnelling nothing", async () => {
    const backend = await closing(obligingBackend());
    const snapshot = snapshotOf([
      {
        name: "east",
        services: [
          serviceRecordV2({
            cluster: "east",
            service: "shop/app",
            ports: [{ number: 80, ipv4: [ep(backend.host, backend.port)] }],
          }),
        ],
        routes: [
          routeRecord("httproute:shop/app", {
            hostnames: ["app.example"],
            rules: [
              routeRule([{ service: "shop/app", port: 80, weight: 1 }], {
                matches: [{ path: { type: "PathPrefix", value: "/public" }, headers: [] }],
              }),
            ],
          }),
        ],
      },
    ]);
    const router = await closing(startNodeRouterOver({ source: { current: () => snapshot } }));

    const reply = (await rawExchange(router.port, H2C_UPGRADE + NEXT)).toString("latin1");

    const statuses = [...reply.matchAll(/^HTTP\/1\.1 (\d{3}) /gm)].map((match) => match[1]);
    // What the client sent after the request is never read as anything but HTTP/1.1, and here not at all: the
    // answer closes the connection (functions/node/http1-front.ts).
    expect(statuses).toEqual(["200"]);
    expect(reply.toLowerCase()).toContain("\r\nconnection: close\r\n");
    expect(reply).toContain("plain /public");
    expect(backend.upgrades).toHaveLength(0);
    expect(backend.tunnelled).toEqual([]);
    expect(backend.plain.map((req) => [req.url, req.headers.upgrade, req.headers["http2-settings"]])).toEqual(
      [["/public", undefined, undefined]],
    );
  });
});
