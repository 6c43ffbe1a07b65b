import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { startNodeRouter } from "../../functions/node/server.js";
import { silentLogger } from "../../lib/logger.js";
import { MemoryStore } from "../../store/memory-store.js";
import { SCHEMA_VERSION } from "../../store/records.js";
import { eventually } from "../support/eventually.js";
import { REDIS_URL, uniquePrefix } from "../support/redis.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function slowBackend(delayMs: number): Promise<{ port: number; received: () => number }> {
  let received = 0;
  const server = createServer((req, res) => {
    received++;
    req.resume();
    setTimeout(() => res.end("slow but done"), delayMs);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as AddressInfo).port, received: () => received };
}

describe("node router process", () => {
  it("finishes an in-flight request on close and accepts no new connection", async () => {
    const backend = await slowBackend(300);
    const store = new MemoryStore();
    const writer = store.writer("local");
    await writer.heartbeat({ holder: "test", leaseMs: 3_600_000, at: Date.now() });
    const router = await startNodeRouter(parseRouterConfig({ PORT: "0" }), {
      source: store,
      host: "127.0.0.1",
      logger: silentLogger,
      drainMs: 5_000,
    });
    cleanups.push(() => router.close());

    // fetch cannot set Host; the router sees the URL authority, so route it by its own address.
    await writer.put({
      v: SCHEMA_VERSION,
      cluster: "local",
      service: "demo/self",
      hosts: [new URL(router.url).hostname],
      pathPrefix: "/",
      port: { name: "http", number: 80 },
      ipv4: { endpoints: [{ ip: "127.0.0.1", port: backend.port }], fallback: false, draining: [] },
      ipv6: { endpoints: [], fallback: false, draining: [] },
    });
    const inFlight = fetch(`${router.url}/`).catch((error: unknown) => error);
    for (let i = 0; i < 500 && backend.received() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(backend.received()).toBe(1);
    const closing = router.close();
    const response = await inFlight;
    await closing;

    expect(response).toBeInstanceOf(Response);
    expect((response as Response).status).toBe(200);
    expect(await (response as Response).text()).toBe("slow but done");
    await expect(fetch(`${router.url}/`)).rejects.toThrow();
  });

  it("runs as `npm run router`: listens, answers healthz from Redis, and exits 0 on SIGTERM", async () => {
    const child: ChildProcess = spawn("node_modules/.bin/tsx", ["functions/node/main.ts"], {
      env: {
        ...process.env,
        PORT: "0",
        HOST: "127.0.0.1",
        REDIS_URL,
        EDGESLICE_PREFIX: uniquePrefix("entry"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("router did not start")), 20_000);
      let output = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const match = /"msg":"router listening".*?"url":"([^"]+)"/.exec(output);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.once("exit", (code) => reject(new Error(`router exited early with ${code}`)));
    });

    // The router listens before its first store load: healthz answers 503 no_snapshot until that load lands,
    // and "degraded" until the change feed is connected too.
    let body: unknown;
    await eventually(
      async () => {
        const health = await fetch(`${url}/_edgeslice/healthz`);
        body = await health.json();
        return health.status === 200 && (body as { status?: string }).status === "ok";
      },
      10_000,
      () => `healthz answers 200 ok (last: ${JSON.stringify(body)})`,
    );
    expect(body).toMatchObject({ status: "ok", clusters: [] });
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
  });
});
