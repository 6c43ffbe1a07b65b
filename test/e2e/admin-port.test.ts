import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { ConfigurationError } from "../../lib/configuration-error.js";
import { silentLogger } from "../../lib/logger.js";
import { MemoryStore } from "../../store/memory-store.js";
import { SCHEMA_VERSION } from "../../store/records.js";
import { freePort } from "../support/redis.js";

/**
 * The Node router's admin endpoints live on ADMIN_PORT only: the public listener answers the probes a load
 * balancer and kubelet need, and 404 for the rest of /_edgeslice/, with or without the token.
 */
const TOKEN = "admin-port-token";
const HOST = "shop.example.test";
const routers: NodeRouter[] = [];
const servers: { close(): void; closeAllConnections(): void }[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
  await Promise.all(routers.splice(0).map((router) => router.close()));
});

async function backend(): Promise<number> {
  const server = createServer((_req, res) => res.end("from the backend"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

async function routerWithRoute(env: Record<string, string> = {}, adminHost?: string): Promise<NodeRouter> {
  const store = new MemoryStore();
  const writer = store.writer("local");
  await writer.heartbeat({ holder: "test", leaseMs: 3_600_000, at: Date.now() });
  await writer.put({
    v: SCHEMA_VERSION,
    cluster: "local",
    service: "shop/web",
    hosts: [HOST],
    pathPrefix: "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints: [{ ip: "127.0.0.1", port: await backend() }], fallback: false, draining: [] },
    ipv6: { endpoints: [], fallback: false, draining: [] },
  });
  const router = await startNodeRouter(parseRouterConfig({ PORT: "0", ADMIN_TOKEN: TOKEN, ...env }), {
    source: store,
    host: "127.0.0.1",
    ...(adminHost ? { adminHost } : {}),
    logger: silentLogger,
    drainMs: 200,
  });
  routers.push(router);
  return router;
}

/** A GET with an explicit Host (fetch cannot set one) and, when `token` is given, the admin token. */
function get(base: string, path: string, token?: string): Promise<{ status: number; body: string }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: HOST };
    if (token) headers.authorization = `Bearer ${token}`;
    const req = request(
      { host: url.hostname.replace(/^\[|\]$/g, ""), port: url.port, path, headers, agent: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const ADMIN_ONLY = [
  "/_edgeslice/metrics",
  "/_edgeslice/explain?host=shop.example.test&path=/",
  "/_edgeslice/routes",
  "/_edgeslice/dashboard",
  "/_edgeslice/ui",
];

describe("the admin port", () => {
  it("serves the proxied traffic and the probes on the public port, and nothing else of /_edgeslice/", async () => {
    const router = await routerWithRoute();
    expect(await get(router.url, "/")).toEqual({ status: 200, body: "from the backend" });
    expect((await get(router.url, "/_edgeslice/livez")).status).toBe(200);
    expect((await get(router.url, "/_edgeslice/readyz")).status).toBe(200);
    expect((await get(router.url, "/_edgeslice/healthz")).status).toBe(200);
    for (const path of ADMIN_ONLY) {
      const answer = await get(router.url, path, TOKEN);
      expect({ path, ...answer }).toEqual({ path, status: 404, body: '{"error":"no_route"}' });
    }
  });

  it("serves every admin endpoint on ADMIN_PORT behind the token, and proxies nothing there", async () => {
    const router = await routerWithRoute();
    expect(router.adminPort).not.toBe(router.port);
    for (const path of ADMIN_ONLY.filter((p) => !p.endsWith("/ui"))) {
      expect({ path, status: (await get(router.adminUrl, path)).status }).toEqual({ path, status: 401 });
      expect({ path, status: (await get(router.adminUrl, path, TOKEN)).status }).toEqual({
        path,
        status: 200,
      });
    }
    expect((await get(router.adminUrl, "/_edgeslice/ui")).body).toContain("<title>edgeslice router</title>");
    expect((await get(router.adminUrl, "/_edgeslice/livez")).status).toBe(200);
    const metrics = await get(router.adminUrl, "/_edgeslice/metrics", TOKEN);
    expect(metrics.body).toContain('edgeslice_requests_total{class="2xx"} 0');
    // The process's own series come first, read at scrape time.
    for (const family of ["process_resident_memory_bytes gauge", "nodejs_eventloop_lag_seconds gauge"]) {
      expect(metrics.body).toContain(`# TYPE ${family}\n`);
    }
    expect(metrics.body).toContain("# TYPE nodejs_gc_duration_seconds histogram\n");
    const explained = JSON.parse((await get(router.adminUrl, ADMIN_ONLY[1] ?? "", TOKEN)).body);
    expect(explained.result).toBe("proxy");
    // A host the store routes, sent to the admin port: answered there, never proxied.
    expect(await get(router.adminUrl, "/")).toEqual({ status: 404, body: '{"error":"no_route"}' });
  });

  it("binds the admin listener where ADMIN_HOST says, apart from the public one", async () => {
    const router = await routerWithRoute({}, "::1");
    expect(router.adminUrl).toBe(`http://[::1]:${router.adminPort}`);
    expect((await get(router.adminUrl, "/_edgeslice/routes", TOKEN)).status).toBe(200);
    await expect(get(`http://127.0.0.1:${router.adminPort}`, "/_edgeslice/livez")).rejects.toThrow();
  });

  it("names ADMIN_PORT when its port is taken, and leaves the public port free", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    servers.push(taken);
    const adminPort = (taken.address() as AddressInfo).port;
    const port = await freePort();
    const starting = startNodeRouter(
      parseRouterConfig({ PORT: String(port), ADMIN_PORT: String(adminPort), ADMIN_TOKEN: TOKEN }),
      { source: new MemoryStore(), host: "127.0.0.1", logger: silentLogger },
    );
    await expect(starting).rejects.toThrow(ConfigurationError);
    await expect(starting).rejects.toThrow(
      `ADMIN_PORT=${adminPort}: 127.0.0.1:${adminPort} is already in use (EADDRINUSE): stop the process that holds it, or choose another ADMIN_PORT`,
    );
    // The public listener it had opened is closed again: the port can be bound.
    const again = createServer();
    await new Promise<void>((resolve, reject) => {
      again.once("error", reject);
      again.listen(port, "127.0.0.1", resolve);
    });
    servers.push(again);
  });
});
