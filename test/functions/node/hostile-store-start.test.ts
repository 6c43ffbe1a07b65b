import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Socket } from "node:net";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { silentLogger } from "../../../lib/logger.js";
import { heartbeat, putRecord, serviceRecord } from "../../e2e/support/contract-layout.js";
import { freePort, redisServerArgs } from "../../support/redis.js";
import { send, startBackend } from "../harness.js";
import { until } from "./hostile-kit.js";

/**
 * The Node router listens at once, whatever its Redis does: one that hangs (DEBUG SLEEP) or a peer that
 * accepts and never answers. Until a snapshot loads, healthz and requests answer 503 no_snapshot; the load
 * keeps retrying in the background.
 */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function routerOn(redisUrl: string): Promise<NodeRouter> {
  const config = parseRouterConfig({ REDIS_URL: redisUrl, PORT: "0", LOG_LEVEL: "error", ADMIN_TOKEN: "t" });
  const router = await startNodeRouter(config, {
    host: "127.0.0.1",
    logger: silentLogger,
    refreshIntervalMs: 100,
    drainMs: 200,
  });
  cleanups.push(() => router.close());
  return router;
}

async function get(router: NodeRouter, path: string) {
  const response = await fetch(`${router.url}${path}`, { headers: { host: "shop-web.example.test" } });
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    body: await response.json(),
  };
}

describe("a router whose Redis does not answer", () => {
  it("listens at once when the peer accepts and never answers, and answers 503 no_snapshot", async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          silent.close(() => resolve());
        }),
    );
    const address = silent.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const router = await routerOn(`redis://127.0.0.1:${port}`);
    await until(() => sockets.size > 0, "the router to connect to the silent peer");
    expect(await get(router, "/_edgeslice/healthz")).toMatchObject({
      status: 503,
      body: { status: "no_snapshot" },
    });
    const request = await get(router, "/");
    expect(request).toMatchObject({ status: 503, body: { error: "no_snapshot" } });
    expect(Number(request.retryAfter)).toBeGreaterThan(0);
  });

  it("listens while Redis sleeps (DEBUG SLEEP), then serves the store once it wakes", async () => {
    const port = await freePort();
    const server: ChildProcess = spawn(
      "redis-server",
      redisServerArgs(port, ["--enable-debug-command", "local"]),
      { stdio: "ignore" },
    );
    cleanups.push(() => {
      server.kill("SIGKILL");
    });
    const url = `redis://127.0.0.1:${port}`;
    const admin = new Redis(url, { retryStrategy: () => 50, maxRetriesPerRequest: null });
    admin.on("error", () => undefined);
    cleanups.push(() => admin.disconnect());
    const backend = await startBackend("127.0.0.1");
    cleanups.push(() => backend.close());
    await heartbeat(admin, "edgeslice", "east", 60_000);
    const record = serviceRecord({
      cluster: "east",
      service: "shop/web",
      ipv4: [{ ip: "127.0.0.1", port: backend.port }],
    });
    await putRecord(admin, "edgeslice", record);

    const sleeper = new Redis(url);
    cleanups.push(() => sleeper.disconnect());
    await sleeper.ping();
    let awake = false;
    // Redis answers nothing at all while it sleeps, so only a short pause tells the command arrived.
    const sleeping = sleeper.call("DEBUG", "SLEEP", "3").then(() => {
      awake = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));

    const router = await routerOn(url);
    expect(awake).toBe(false);
    expect(await get(router, "/_edgeslice/healthz")).toMatchObject({
      status: 503,
      body: { status: "no_snapshot" },
    });
    expect(await get(router, "/")).toMatchObject({ status: 503, body: { error: "no_snapshot" } });
    await sleeping;
    await until(async () => (await get(router, "/_edgeslice/healthz")).status === 200, "a snapshot");
    const served = await send(router.port, { headers: { host: "shop-web.example.test" } });
    expect([served.status, served.body]).toEqual([200, "ok GET /"]);
  }, 20_000);
});
