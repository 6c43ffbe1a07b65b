import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { silentLogger } from "../../../lib/logger.js";
import { snapshotOf } from "../fixtures.js";

/**
 * A load balancer keeps its idle connections to the router for 60 s or more and sends the next request on one
 * whenever it likes: the router must not close first (Node's own default was 5 s). These tests see one raw
 * connection carry several requests, so a reuse is a reuse, never a quiet reconnect.
 */
const routers: NodeRouter[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const router of routers.splice(0)) await router.close();
});

async function routerWith(env: Record<string, string>): Promise<NodeRouter> {
  const snapshot = snapshotOf([]);
  const router = await startNodeRouter(parseRouterConfig({ PORT: "0", ...env }), {
    source: { current: () => snapshot },
    host: "127.0.0.1",
    logger: silentLogger,
    drainMs: 200,
  });
  routers.push(router);
  return router;
}

/** One client connection that sends healthz requests one after another and reads each whole answer. */
async function clientConnection(port: number) {
  const socket = connect(port, "127.0.0.1");
  sockets.push(socket);
  await once(socket, "connect");
  let buffered = "";
  let waiting: (() => void) | undefined;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    buffered += chunk;
    waiting?.();
  });
  const closed = once(socket, "close").then(() => undefined);
  let answers = 0;
  return {
    closed,
    isOpen: () => !socket.destroyed && socket.readyState === "open",
    answers: () => answers,
    async healthz(): Promise<number> {
      socket.write("GET /_edgeslice/healthz HTTP/1.1\r\nHost: router.example.test\r\n\r\n");
      for (;;) {
        const end = buffered.indexOf("\r\n\r\n");
        const length = /content-length: (\d+)/i.exec(buffered.slice(0, end));
        if (end >= 0 && length && buffered.length >= end + 4 + Number(length[1])) {
          const status = Number(buffered.slice(9, 12));
          buffered = buffered.slice(end + 4 + Number(length[1]));
          answers++;
          return status;
        }
        if (socket.destroyed) throw new Error("the router closed the connection");
        await Promise.race([new Promise<void>((resolve) => (waiting = resolve)), closed]);
      }
    },
  };
}

describe("client connections of the Node router", () => {
  it("listens with CLIENT_KEEP_ALIVE_TIMEOUT_MS and CLIENT_HEADERS_TIMEOUT_MS, 65 s and 66 s by default", async () => {
    const defaults = await routerWith({});
    const tuned = await routerWith({
      CLIENT_KEEP_ALIVE_TIMEOUT_MS: "120000",
      CLIENT_HEADERS_TIMEOUT_MS: "121000",
    });

    expect([defaults.server.keepAliveTimeout, defaults.server.headersTimeout]).toEqual([65_000, 66_000]);
    expect([tuned.server.keepAliveTimeout, tuned.server.headersTimeout]).toEqual([120_000, 121_000]);
  });

  it("on its default settings reuses an idle client connection after a shorter keep-alive timeout closed the same kind of connection", async () => {
    // The short router stands for Node's old 5 s default, scaled down; the other runs the defaults.
    const short = await routerWith({ CLIENT_KEEP_ALIVE_TIMEOUT_MS: "300" });
    const defaults = await routerWith({});
    const toShort = await clientConnection(short.port);
    const toDefaults = await clientConnection(defaults.port);
    expect(await toShort.healthz()).toBe(200);
    expect(await toDefaults.healthz()).toBe(200);

    // Both connections now idle; the short timeout has passed once its router closed its connection.
    await toShort.closed;

    expect(toDefaults.isOpen()).toBe(true);
    expect(await toDefaults.healthz()).toBe(200);
    expect(await toDefaults.healthz()).toBe(200);
    expect(toDefaults.answers()).toBe(3);
  });
});
