import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisWriter } from "../../store/redis/writer.js";
import { freePort, type PrivateRedis, REDIS_URL, startPrivateRedis } from "../support/redis.js";
import { at, CLUSTER, get, namedBackend, publish, record, workerFixture } from "./worker-fixture.js";

/** The Worker bundle in real workerd and its store: the isolate's cache TTL, and Redis going away. */
const { redis, freshPrefix, worker, backend } = workerFixture("workerd");

async function until<T>(
  attempt: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("the Worker bundle in workerd", () => {
  it("picks up a changed record once the cache TTL has passed", async () => {
    const prefix = freshPrefix();
    const before = await backend("127.0.0.1", namedBackend("before"));
    const after = await backend("127.0.0.1", namedBackend("after"));
    const writer = createRedisWriter(redis(), { prefix, cluster: CLUSTER });
    await publish(writer, [record("shop/web", ["web.example.test"], [at(before)])]);
    const mf = worker({ REDIS_URL, EDGESLICE_PREFIX: prefix, CACHE_TTL_MS: "100" });
    expect((await get(mf, "http://web.example.test/")).body).toMatch(/^before /);

    await writer.put(record("shop/web", ["web.example.test"], [at(after)]));
    const seen = await until(
      () => get(mf, "http://web.example.test/"),
      (response) => response.body.startsWith("after "),
    );

    expect(seen.status).toBe(200);
    expect(seen.body).toMatch(/^after /);
  });

  describe("with Redis going away", () => {
    let privateRedis: PrivateRedis;
    let client: Redis;

    beforeAll(async () => {
      privateRedis = await startPrivateRedis();
      client = new Redis(privateRedis.url, { maxRetriesPerRequest: 1 });
      client.on("error", () => {});
    });
    afterAll(async () => {
      client.disconnect();
      await privateRedis.stop();
    });

    it("keeps serving the last known records when Redis stops answering", async () => {
      const prefix = freshPrefix();
      const web = await backend("127.0.0.1", namedBackend("web"));
      await publish(createRedisWriter(client, { prefix, cluster: CLUSTER }), [
        record("shop/web", ["web.example.test"], [at(web)]),
      ]);
      const mf = worker({ REDIS_URL: privateRedis.url, EDGESLICE_PREFIX: prefix, CACHE_TTL_MS: "50" });
      expect((await get(mf, "http://web.example.test/")).status).toBe(200);

      await privateRedis.stop();
      // Several rounds past the TTL: each one tries a background reload against the dead Redis.
      const statuses: number[] = [];
      for (let round = 0; round < 5; round++) {
        await new Promise((resolve) => setTimeout(resolve, 80));
        statuses.push((await get(mf, "http://web.example.test/")).status);
      }

      expect(statuses).toEqual([200, 200, 200, 200, 200]);
    });
  });

  it("answers 503 when Redis is unreachable and nothing was ever loaded", async () => {
    const deadPort = await freePort();
    const mf = worker({ REDIS_URL: `redis://127.0.0.1:${deadPort}`, EDGESLICE_PREFIX: freshPrefix() });

    const response = await get(mf, "http://web.example.test/");

    expect(response.status).toBe(503);
  });
});
