import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterKeys } from "../../store/keys.js";
import { annotationRoute } from "../../store/legacy.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { serviceRecordFromV1 } from "../../store/services.js";
import type { ClusterWriter } from "../../store/store.js";
import { type PrivateRedis, startPrivateRedis } from "../support/redis.js";
import { type RedisMonitor, startRedisMonitor } from "../support/redis-monitor.js";
import { at, type Backend, get, namedBackend, record, workerFixture } from "./worker-fixture.js";

/**
 * The built Worker in real workerd with a host budget smaller than the store (functions/workers/host-mode.ts):
 * what it reads is checked on the private redis-server's MONITOR, what it serves on the wire.
 */
const { freshPrefix, worker, backend } = workerFixture("workerd-host-budget");

let privateRedis: PrivateRedis;
let client: Redis;
let monitor: RedisMonitor;

beforeAll(async () => {
  privateRedis = await startPrivateRedis();
  client = new Redis(privateRedis.url, { maxRetriesPerRequest: 1 });
  client.on("error", () => {});
  monitor = await startRedisMonitor(privateRedis.url);
});
afterAll(async () => {
  monitor.close();
  client.disconnect();
  await privateRedis.stop();
});

const HOSTS = 8;
/** About two hosts' records (a service and its route, some 500 bytes each host): a fraction of the store. */
const BUDGET = "1200";

async function publish(writer: ClusterWriter, service: string, host: string, backends: Backend[]) {
  const v1 = { ...record(service, [host], backends.map(at)), cluster: writer.cluster };
  await writer.heartbeat({ holder: "test", leaseMs: 120_000, at: Date.now() });
  await writer.putService(serviceRecordFromV1(v1));
  await writer.putRoute(annotationRoute(v1));
}

async function until<T>(attempt: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A store of HOSTS hosts (h0.example.test ...), each served by a backend answering its own name. */
async function store(prefix: string) {
  const east = createRedisWriter(client, { prefix, cluster: "east" });
  for (let index = 0; index < HOSTS; index++) {
    const named = await backend("127.0.0.1", namedBackend(`h${index}`));
    await publish(east, `shop/s${index}`, `h${index}.example.test`, [named]);
  }
  return east;
}

const since = (from: number, name: string) => monitor.commands.slice(from).filter((args) => args[0] === name);
/** Host index reads of `host` itself (the cold read's first pattern) since `from`. */
const coldReadsOf = (from: number, host: string) =>
  since(from, "zrangebylex").filter((args) => args[2]?.startsWith(`[${host}`)).length;
const wholeReads = (from: number, prefix: string) => {
  const keys = clusterKeys(prefix, "east");
  return since(from, "hgetall").filter((args) => args[1] === keys.services || args[1] === keys.routes);
};

describe("the Worker with a host budget smaller than the store", () => {
  it("routes requests to many hosts, re-reads an evicted host on its next request, and never reads the whole store", async () => {
    const prefix = freshPrefix();
    await store(prefix);
    const start = monitor.commands.length;
    const mf = worker({
      REDIS_URL: privateRedis.url,
      EDGESLICE_PREFIX: prefix,
      CACHE_TTL_MS: "100",
      WORKER_HOST_BUDGET_BYTES: BUDGET,
    });

    for (let round = 0; round < 2; round++) {
      for (let index = 0; index < HOSTS; index++) {
        const response = await get(mf, `http://h${index}.example.test/`);
        expect(response.status).toBe(200);
        expect(response.body).toMatch(new RegExp(`^h${index} `));
      }
    }

    // h0 was evicted by the hosts after it, so the second round read it again.
    expect(coldReadsOf(start, "h0.example.test")).toBeGreaterThanOrEqual(2);
    expect(since(start, "memory").length).toBeGreaterThan(0);
    expect(wholeReads(start, prefix)).toEqual([]);
  }, 60_000);

  it("serves a change to a held host after a refresh, and reads no record while nothing changes", async () => {
    const prefix = freshPrefix();
    const east = await store(prefix);
    const after = await backend("127.0.0.1", namedBackend("after"));
    const start = monitor.commands.length;
    const mf = worker({
      REDIS_URL: privateRedis.url,
      EDGESLICE_PREFIX: prefix,
      CACHE_TTL_MS: "100",
      WORKER_HOST_BUDGET_BYTES: BUDGET,
    });
    expect((await get(mf, "http://h1.example.test/")).body).toMatch(/^h1 /);
    // Host mode is on once Redis was asked the store's size; the re-read of h1 that follows ends its setup.
    await until(
      async () => since(start, "memory").length,
      (count) => count > 0,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));

    const quietFrom = monitor.commands.length;
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect((await get(mf, "http://h1.example.test/")).body).toMatch(/^h1 /);
    }
    expect(since(quietFrom, "xrange").length).toBeGreaterThan(0);
    expect(since(quietFrom, "hmget")).toEqual([]);
    expect(since(quietFrom, "zrangebylex")).toEqual([]);

    await east.putService(serviceRecordFromV1(record("shop/s1", ["h1.example.test"], [at(after)])));
    const seen = await until(
      () => get(mf, "http://h1.example.test/"),
      (response) => response.body.startsWith("after "),
    );
    expect(seen.body).toMatch(/^after /);
    expect(wholeReads(start, prefix)).toEqual([]);
  }, 60_000);
});
