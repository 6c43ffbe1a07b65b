import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app/app.js";
import type { DashboardView } from "../../../functions/app/dashboard-data.js";
import { createRouting } from "../../../functions/core/routing.js";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import { silentLogger } from "../../../lib/logger.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { ep, serviceRecord } from "../fixtures.js";
import { testConfig } from "../harness.js";

const HOUR = 3_600_000;
const auth = { authorization: "Bearer secret-token" };

/** east is fresh and serves api.localhost; west's sync is gone (no heartbeat: stale) and published web.localhost. */
async function routerWith(config: { failStaticMaxMs?: number } = {}) {
  let now = 1_700_000_000_000;
  const clock = () => now;
  const store = new MemoryStore(clock);
  await store.writer("east").put(
    serviceRecord({
      cluster: "east",
      service: "demo/api",
      hosts: ["api.localhost"],
      ipv4: [ep("127.0.0.1")],
    }),
  );
  await store.writer("east").heartbeat({ holder: "east-0", leaseMs: 100 * HOUR, at: now });
  await store.writer("west").put(
    serviceRecord({
      cluster: "west",
      service: "demo/web",
      hosts: ["web.localhost"],
      ipv4: [ep("127.0.0.2")],
    }),
  );
  const deps = {
    source: store,
    upstream: createFetchUpstream(fetch),
    config: { ...testConfig, ...config },
    now: clock,
    random: Math.random,
    balancing: "p2c" as const,
    logger: silentLogger,
  };
  const app = createApp(deps, createRouting(deps));
  const explain = async (host: string) =>
    (await (
      await app.request(`http://router/_edgeslice/explain?host=${host}`, { headers: auth })
    ).json()) as {
      result: string;
      expiredClusters?: string[];
    };
  return { app, explain, advance: (ms: number) => (now += ms) };
}

describe("a cluster stale longer than FAIL_STATIC_MAX_MS serves nothing", () => {
  it("serves a gone cluster's routes (fail static) for the bound, then answers no_route for them; a fresh cluster's stay", async () => {
    const r = await routerWith();
    expect((await r.explain("web.localhost")).result).not.toBe("no_route");

    r.advance(HOUR);

    const explained = await r.explain("web.localhost");
    expect(explained.result).toBe("no_route");
    expect(explained.expiredClusters).toEqual(["west"]);
    expect((await r.explain("api.localhost")).result).not.toBe("no_route");
    const metrics = await (await r.app.request("http://router/_edgeslice/metrics", { headers: auth })).text();
    expect(metrics).toContain('edgeslice_cluster_expired{cluster="west"} 1');
    expect(metrics).toContain('edgeslice_cluster_expired{cluster="east"} 0');
    const dashboard = (await (
      await r.app.request("http://router/_edgeslice/dashboard", { headers: auth })
    ).json()) as DashboardView;
    expect(dashboard.clusters.map((cluster) => [cluster.name, cluster.expired])).toEqual([
      ["east", false],
      ["west", true],
    ]);
  });

  it("keeps serving for ever with FAIL_STATIC_MAX_MS=0", async () => {
    const r = await routerWith({ failStaticMaxMs: 0 });
    expect((await r.explain("web.localhost")).result).not.toBe("no_route");
    r.advance(1_000 * HOUR);
    expect((await r.explain("web.localhost")).result).not.toBe("no_route");
  });
});
