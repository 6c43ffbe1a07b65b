import { afterEach, describe, expect, it } from "vitest";
import { type HealthServer, type Readiness, startHealthServer } from "../../sync/health-server.js";
import { createSyncMetrics } from "../../sync/metrics.js";

describe("health server", () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const start = async (readiness: () => Readiness) => {
    const metrics = createSyncMetrics({ cluster: "east" });
    server = await startHealthServer({ port: 0, host: "127.0.0.1", metrics, readiness });
    return { metrics, base: `http://127.0.0.1:${server.address.port}` };
  };

  it.each(["/livez", "/healthz"])(
    "answers %s while the process runs, whatever readiness says",
    async (probe) => {
      const { base } = await start(() => ({ synced: false, redis: false }));
      const response = await fetch(`${base}${probe}`);
      expect(response.status).toBe(200);
    },
  );

  it.each([
    { synced: false, redis: true, status: 503 },
    { synced: true, redis: false, status: 503 },
    { synced: false, redis: false, status: 503 },
    { synced: true, redis: true, status: 200 },
  ])("answers /readyz $status when synced=$synced and redis=$redis", async ({ synced, redis, status }) => {
    const { base } = await start(() => ({ synced, redis }));
    const response = await fetch(`${base}/readyz`);
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({ ready: status === 200, synced, redis });
  });

  it("stays ready while the API server is unreachable and says since when, and which informers are refused", async () => {
    const since = "2026-01-01T00:00:00.000Z";
    const { base } = await start(() => ({
      synced: true,
      redis: true,
      publishing: true,
      apiserverUnreachableSince: since,
      refused: ["endpointslices (all namespaces)"],
    }));
    const response = await fetch(`${base}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ready: true,
      synced: true,
      redis: true,
      publishing: true,
      apiserverUnreachableSince: since,
      refused: ["endpointslices (all namespaces)"],
    });
  });

  it("answers /readyz 503 while the store lacks what the sync holds (a re-push after Redis lost its data)", async () => {
    const { base } = await start(() => ({ synced: true, redis: true, storeComplete: false }));
    const response = await fetch(`${base}/readyz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ ready: false, synced: true, redis: true, storeComplete: false });
  });

  it("follows readiness as it changes", async () => {
    let state: Readiness = { synced: false, redis: true };
    const { base } = await start(() => state);
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    state = { synced: true, redis: true };
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it("serves the metrics in Prometheus text format with their current values", async () => {
    const { base, metrics } = await start(() => ({ synced: true, redis: true }));
    metrics.count("writes", 3);
    metrics.set("leader", 1);
    const response = await fetch(`${base}/metrics`);
    expect(response.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    const text = await response.text();
    expect(text).toContain("# TYPE edgeslice_sync_writes_total counter");
    expect(text).toContain('edgeslice_sync_writes_total{cluster="east"} 3');
    expect(text).toContain('edgeslice_sync_leader{cluster="east"} 1');
    expect(text).toContain('edgeslice_sync_valve_holds_total{cluster="east"} 0');
    // The sync's own series carry its cluster; the build's and the process's (memory, CPU, event loop, GC)
    // are the process's.
    expect(text).toContain("# TYPE process_resident_memory_bytes gauge");
    expect(text).toContain("# TYPE nodejs_eventloop_lag_seconds gauge");
    for (const line of text.trim().split("\n")) {
      expect(line).toMatch(
        /^(# (HELP|TYPE) \w+ .+|\w+\{cluster="east"\} -?\d+(\.\d+)?|(process|nodejs)_\w+(\{[^}]*\})? \S+|edgeslice_build_info\{[^}]*\} 1)$/,
      );
    }
  });

  it("answers 404 for other paths and 405 for writes", async () => {
    const { base } = await start(() => ({ synced: true, redis: true }));
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/healthz`, { method: "POST" })).status).toBe(405);
  });
});
