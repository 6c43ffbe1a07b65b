import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { clusterKeys } from "../../store/keys.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { eventually } from "../support/eventually.js";
import { capturingLogger } from "../support/loggers.js";
import { type PrivateRedis, startPrivateRedis, uniquePrefix } from "../support/redis.js";
import { startBackend } from "./support/backends.js";
import { cleanupsAfterEach } from "./support/cleanups.js";
import { serviceRecord } from "./support/records.js";
import { startTestRouter } from "./support/router.js";
import { fetchOnce, startTraffic } from "./support/traffic.js";

const HOST = "cached.reliability.test";
const OTHER_HOST = "second.reliability.test";

const defer = cleanupsAfterEach();

function writerClient(redis: PrivateRedis): Redis {
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  client.on("error", () => {});
  defer(async () => client.disconnect());
  return client;
}

describe("Redis restarted mid-traffic", () => {
  it("every request for a cached route gets 200 while Redis is down and after it comes back empty; later changes flow again", async () => {
    const redis = await startPrivateRedis();
    defer(() => redis.stop());
    const prefix = uniquePrefix("restart");
    const first = await startBackend("first");
    const second = await startBackend("second");
    defer(
      () => first.kill(),
      () => second.kill(),
    );
    const client = writerClient(redis);
    const writer = createRedisWriter(client, { prefix, cluster: "east" });
    await writer.put(serviceRecord({ cluster: "east", service: "shop/web", host: HOST, backends: [first] }));
    await writer.heartbeat({ holder: "test", leaseMs: 60_000, at: Date.now() });

    const router = await startTestRouter({
      env: { REDIS_URL: redis.url, EDGESLICE_PREFIX: prefix },
      refreshIntervalMs: 100,
    });
    defer(() => router.close());
    await eventually(
      async () => (await fetchOnce(`${router.url}/`, HOST)).status === 200,
      5_000,
      "the route is served",
    );

    const traffic = startTraffic(router.url, { host: HOST, concurrency: 3 });
    const waitForMore = async (count: number) => {
      const target = traffic.completed + count;
      await eventually(() => traffic.completed >= target, 10_000, `${count} more requests completed`);
    };
    await waitForMore(30);
    await redis.stop();
    const downAt = traffic.completed;
    await waitForMore(60);
    const servedWhileDown = traffic.completed - downAt;
    await redis.start();
    await waitForMore(60);
    const report = await traffic.stop();

    expect(servedWhileDown).toBeGreaterThanOrEqual(60);
    expect(report.clientErrors).toEqual([]);
    expect([...report.statuses.keys()]).toEqual([200]);
    expect(report.statuses.get(200)).toBe(report.total);

    // The store came back empty; the sync re-pushes (here: the writer) and new changes reach the router again.
    await writer.put(serviceRecord({ cluster: "east", service: "shop/web", host: HOST, backends: [second] }));
    await writer.put(
      serviceRecord({ cluster: "east", service: "shop/api", host: OTHER_HOST, backends: [first] }),
    );
    await writer.heartbeat({ holder: "test", leaseMs: 60_000, at: Date.now() });
    // Each put reaches the router on its own; the second one (api) may land a read after the first.
    await eventually(
      async () =>
        (await fetchOnce(`${router.url}/`, HOST)).backend === "second" &&
        (await fetchOnce(`${router.url}/`, OTHER_HOST)).backend === "first",
      10_000,
      "the router follows both changes made after the restart",
    );
    expect(await fetchOnce(`${router.url}/`, OTHER_HOST)).toMatchObject({ status: 200, backend: "first" });
  });

  it("a corrupt record in Redis is skipped and logged while the other Services keep serving", async () => {
    const redis = await startPrivateRedis();
    defer(() => redis.stop());
    const prefix = uniquePrefix("corrupt");
    const backend = await startBackend("good");
    defer(() => backend.kill());
    const client = writerClient(redis);
    const writer = createRedisWriter(client, { prefix, cluster: "east" });
    await writer.put(
      serviceRecord({ cluster: "east", service: "shop/good", host: HOST, backends: [backend] }),
    );
    await writer.put(
      serviceRecord({ cluster: "east", service: "shop/bad", host: OTHER_HOST, backends: [backend] }),
    );
    await writer.heartbeat({ holder: "test", leaseMs: 60_000, at: Date.now() });
    const keys = clusterKeys(prefix, "east");
    await client.hset(
      keys.services,
      "shop/bad",
      '{"v":1,"cluster":"east","service":"shop/bad","hosts":[42]}',
    );

    const { logger, lines } = capturingLogger();
    const router = await startTestRouter({ env: { REDIS_URL: redis.url, EDGESLICE_PREFIX: prefix }, logger });
    defer(() => router.close());
    await eventually(
      async () => (await fetchOnce(`${router.url}/`, HOST)).status === 200,
      5_000,
      "the good route is served",
    );
    const good = await fetchOnce(`${router.url}/`, HOST);
    const bad = await fetchOnce(`${router.url}/`, OTHER_HOST);
    expect(good).toMatchObject({ status: 200, backend: "good" });
    expect(bad.status).toBe(404);
    expect(JSON.parse(bad.body)).toEqual({ error: "no_route", requestId: expect.any(String) });
    const warnings = lines.filter(
      (line) => line.level === "warn" && JSON.stringify(line).includes("shop/bad"),
    );
    expect(warnings.length).toBeGreaterThan(0);
  });
});
