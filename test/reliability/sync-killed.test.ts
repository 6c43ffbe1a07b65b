import { request } from "undici";
import { describe, expect, it } from "vitest";
import { createRedisWriter } from "../../store/redis/writer.js";
import { serviceObject } from "../fake-kube/fixtures.js";
import { startFakeKube } from "../fake-kube/server.js";
import { eventually } from "../support/eventually.js";
import { REDIS_URL } from "../support/redis.js";
import { startBackend } from "./support/backends.js";
import { cleanupsAfterEach, sharedRedis } from "./support/cleanups.js";
import { readySlice } from "./support/kube-objects.js";
import { serviceRecord } from "./support/records.js";
import { startTestRouter } from "./support/router.js";
import { startSyncChild } from "./support/sync-child.js";
import { startTraffic } from "./support/traffic.js";

const HOST = "web.failover.test";

const defer = cleanupsAfterEach();

async function backendServing(routerUrl: string): Promise<string | null> {
  const response = await request(routerUrl, { headers: { host: HOST } });
  await response.body.text();
  const backend = response.headers["x-backend"];
  return typeof backend === "string" ? backend : null;
}

describe("sync killed", () => {
  it("the router's own cluster's sync is SIGKILLed: its lease lapses, traffic fails over to the other cluster without an error, and comes back when a new sync starts", async () => {
    const { redis, prefix } = sharedRedis("killed", defer);
    const eastBackend = await startBackend("east");
    const westBackend = await startBackend("west");
    defer(
      () => eastBackend.kill(),
      () => westBackend.kill(),
    );

    // West: a healthy cluster whose sync keeps its lease fresh.
    const west = createRedisWriter(redis, { prefix, cluster: "west" });
    await west.put(
      serviceRecord({ cluster: "west", service: "shop/web", host: HOST, backends: [westBackend] }),
    );
    await west.heartbeat({ holder: "west-sync", leaseMs: 120_000, at: Date.now() });

    // East: the router's own cluster, synced from its API server by the real sync in a child process.
    const kube = await startFakeKube();
    defer(() => kube.close());
    kube.apply(serviceObject("shop", "web", { "edgeslice.io/hosts": HOST }));
    kube.apply(readySlice("shop", "web", [{ ip: eastBackend.ip, port: eastBackend.port }]));
    const syncEnv = {
      TEST_KUBE_URL: kube.url,
      TEST_KUBE_TOKEN: kube.token,
      CLUSTER_NAME: "east",
      REDIS_URL,
      EDGESLICE_PREFIX: prefix,
      LEADER_ELECTION: "false",
      SYNC_PORT: "0",
      SYNC_HOST: "127.0.0.1",
      LEASE_MS: "1000",
      HEARTBEAT_MS: "200",
      DEBOUNCE_MS: "10",
    };
    let sync = await startSyncChild(syncEnv);
    defer(() => sync.kill());

    const router = await startTestRouter({
      env: { REDIS_URL, EDGESLICE_PREFIX: prefix, ROUTER_CLUSTER: "east" },
      refreshIntervalMs: 100,
    });
    defer(() => router.close());
    // West is routable before the east sync has published; start the measured traffic only once east serves,
    // so the recorded order begins with east.
    await eventually(
      async () => (await backendServing(router.url)) === "east",
      10_000,
      "the router prefers its own cluster",
    );
    const traffic = startTraffic(router.url, { host: HOST, concurrency: 2 });
    const lastBackend = () => traffic.backends[traffic.backends.length - 1];

    await sync.kill();
    await eventually(
      () => lastBackend() === "west",
      10_000,
      "traffic fails over to west after east's lease lapses",
    );

    sync = await startSyncChild(syncEnv);
    await eventually(() => lastBackend() === "east", 10_000, "traffic returns to east once its sync is back");
    const report = await traffic.stop();

    expect(report.clientErrors).toEqual([]);
    expect([...report.statuses.keys()]).toEqual([200]);
    // east → west → east, in that order, with every request answered.
    const order = report.backends.filter((name, index) => name !== report.backends[index - 1]);
    expect(order[0]).toBe("east");
    expect(order).toContain("west");
    expect(order[order.length - 1]).toBe("east");
    expect(report.backends.length).toBe(report.total);
    // Two sync child starts and the killed one's writer fence running out (LEADER_LEASE_MS): ~20 s on a busy
    // machine, past the default bound.
  }, 60_000);
});
