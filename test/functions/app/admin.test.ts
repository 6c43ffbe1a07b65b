import { describe, expect, it } from "vitest";
import { constantTimeEqual } from "../../../functions/app/admin.js";
import { createApp } from "../../../functions/app/app.js";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import { silentLogger } from "../../../lib/logger.js";
import { MemoryStore } from "../../../store/memory-store.js";
import type { SnapshotSource } from "../../../store/store.js";
import { ep, serviceRecord } from "../fixtures.js";
import { testConfig } from "../harness.js";

/** `null`: ADMIN_TOKEN unset. */
function appWith(source: SnapshotSource, adminToken: string | null = "secret-token") {
  return createApp({
    source,
    upstream: createFetchUpstream(fetch),
    config: { ...testConfig, adminToken: adminToken ?? undefined, cluster: "a" },
    now: Date.now,
    random: Math.random,
    balancing: "p2c",
    logger: silentLogger,
  });
}

async function loadedStore(): Promise<MemoryStore> {
  const store = new MemoryStore();
  const a = store.writer("a");
  await a.put(serviceRecord({ cluster: "a", ipv4: [ep("127.0.0.1")], ipv6: [ep("::1")] }));
  await a.heartbeat({ holder: "t", leaseMs: 60_000, at: Date.now() });
  const b = store.writer("b");
  await b.put(serviceRecord({ cluster: "b", ipv4: [ep("127.0.1.1")] }));
  return store;
}

const auth = { authorization: "Bearer secret-token" };

describe("admin endpoints", () => {
  it.each(["readyz", "healthz"])("%s answers 503 before any snapshot was loaded", async (probe) => {
    const res = await appWith({ current: () => undefined }).request(`http://router/_edgeslice/${probe}`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: "no_snapshot" });
  });

  it.each(["readyz", "healthz"])("%s is public and describes the snapshot", async (probe) => {
    const res = await appWith(await loadedStore()).request(`http://router/_edgeslice/${probe}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; clusters: { name: string; stale: boolean }[] };
    expect(body.status).toBe("ok");
    expect(body.clusters.map((c) => [c.name, c.stale])).toEqual([
      ["a", false],
      ["b", true],
    ]);
  });

  it("healthz says degraded, still 200, while the store is unreachable and the last records serve", async () => {
    const store = await loadedStore();
    const lostStore: SnapshotSource = {
      current: () => store.current(),
      status: () => ({ connected: false, lastLoadAt: 1_000, version: 7 }),
    };
    const app = appWith(lostStore);
    const res = await app.request("http://router/_edgeslice/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: "degraded",
      store: { connected: false, lastLoadAt: 1_000 },
    });
    const metrics = await app.request("http://router/_edgeslice/metrics", { headers: auth });
    expect(await metrics.text()).toMatch(/^edgeslice_store_connected 0$/m);
  });

  it.each(["routes", "explain?host=app.example&path=/", "metrics"])(
    "%s needs the bearer token",
    async (path) => {
      const app = appWith(await loadedStore());
      const missing = await app.request(`http://router/_edgeslice/${path}`);
      const wrong = await app.request(`http://router/_edgeslice/${path}`, {
        headers: { authorization: "Bearer secret-tokeX" },
      });
      const right = await app.request(`http://router/_edgeslice/${path}`, { headers: auth });
      expect([missing.status, wrong.status, right.status]).toEqual([401, 401, 200]);
    },
  );

  it("takes the token whatever the case of the Bearer scheme (RFC 9110 §11.1)", async () => {
    const app = appWith(await loadedStore());
    const statuses = [];
    for (const authorization of ["bearer secret-token", "BEARER  secret-token", "Basic secret-token"]) {
      statuses.push(
        (await app.request("http://router/_edgeslice/routes", { headers: { authorization } })).status,
      );
    }
    expect(statuses).toEqual([200, 200, 401]);
  });

  it("answers 404 for protected endpoints when ADMIN_TOKEN is unset", async () => {
    const res = await appWith(await loadedStore(), null).request("http://router/_edgeslice/routes", {
      headers: { authorization: "Bearer " },
    });
    expect(res.status).toBe(404);
  });

  it("routes lists every route with its clusters and staleness", async () => {
    const res = await appWith(await loadedStore()).request("http://router/_edgeslice/routes", {
      headers: auth,
    });
    const body = (await res.json()) as {
      routes: { hostnames: string[]; clusters: { cluster: string; stale: boolean }[] }[];
    };
    expect(body.routes.map((r) => r.hostnames)).toEqual([["app.example"]]);
    expect(body.routes[0]?.clusters.map((c) => [c.cluster, c.stale])).toEqual([
      ["a", false],
      ["b", true],
    ]);
  });

  it("explain tells the route, the dropped stale cluster, the family and the tiers", async () => {
    const res = await appWith(await loadedStore()).request(
      "http://router/_edgeslice/explain?host=APP.example:443&path=/x",
      { headers: auth },
    );
    const body = (await res.json()) as {
      result: string;
      droppedStale: string[];
      clusters: { cluster: string; family: string }[];
      tiers: { name: string; backends: { address: string }[] }[];
    };
    expect(body.result).toBe("proxy");
    expect(body.droppedStale).toEqual(["b"]);
    expect(body.clusters.map((c) => [c.cluster, c.family])).toEqual([["a", "ipv4"]]);
    expect(body.tiers.map((t) => [t.name, t.backends.map((b) => b.address)])).toEqual([
      ["local", ["127.0.0.1:8080"]],
    ]);
  });

  it("explain says no_route for an unknown host", async () => {
    const res = await appWith(await loadedStore()).request(
      "http://router/_edgeslice/explain?host=evil.example",
      {
        headers: auth,
      },
    );
    expect(((await res.json()) as { result: string }).result).toBe("no_route");
  });

  it("metrics renders Prometheus text with request classes and the snapshot version", async () => {
    const app = appWith(await loadedStore());
    await app.request("http://unknown.example/");
    const res = await app.request("http://router/_edgeslice/metrics", { headers: auth });
    const text = await res.text();
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(text).toContain('edgeslice_requests_total{class="4xx"} 1');
    expect(text).toMatch(/^edgeslice_snapshot_version [1-9]\d*$/m);
    expect(text).toContain('edgeslice_clusters{stale="true"} 1');
  });
});

describe("constantTimeEqual", () => {
  it.each([
    ["abc", "abc", true],
    ["abd", "abc", false],
    ["ab", "abc", false],
    ["abcd", "abc", false],
    ["", "abc", false],
  ])("%j vs %j is %s", (presented, expected, equal) => {
    expect(constantTimeEqual(presented, expected)).toBe(equal);
  });
});
