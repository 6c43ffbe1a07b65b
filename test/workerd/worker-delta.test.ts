import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routerAclRules } from "../../store/acl.js";
import { clusterKeys } from "../../store/keys.js";
import { annotationRoute } from "../../store/legacy.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { serviceRecordFromV1 } from "../../store/services.js";
import type { ClusterWriter } from "../../store/store.js";
import { type PrivateRedis, startPrivateRedis } from "../support/redis.js";
import { type RedisMonitor, startRedisMonitor } from "../support/redis-monitor.js";
import { at, type Backend, get, namedBackend, record, workerFixture } from "./worker-fixture.js";

/**
 * The built Worker in real workerd following a private redis-server by deltas (functions/workers/delta-*.ts):
 * what it reads is checked on the server's own MONITOR, what it serves on the wire.
 */
const { freshPrefix, worker, backend } = workerFixture("workerd-delta");

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

/** A Service of store format 2 as the sync writes it: its record, then its route (and host index members). */
async function publish(writer: ClusterWriter, service: string, host: string, backends: Backend[]) {
  const v1 = { ...record(service, [host], backends.map(at)), cluster: writer.cluster };
  await writer.heartbeat({ holder: "test", leaseMs: 120_000, at: Date.now() });
  await writer.putService(serviceRecordFromV1(v1));
  await writer.putRoute(annotationRoute(v1));
}

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

/** Commands MONITOR saw from `from` on that touch `key`. */
const commandsOn = (from: number, name: string, key: string) =>
  monitor.commands.slice(from).filter((args) => args[0] === name && args[1] === key);

/** Waits until the isolate read the cluster's services whole (its background whole-store read). */
const readWhole = (from: number, prefix: string, cluster: string) =>
  until(
    async () => commandsOn(from, "hgetall", clusterKeys(prefix, cluster).services).length,
    (count) => count > 0,
  );

const bodyStartsWith = (prefix: string) => (response: { body: string }) => response.body.startsWith(prefix);

describe("the Worker following the store by deltas", () => {
  it("serves a cluster that publishes certificate records, and never reads them (Cloudflare ends TLS)", async () => {
    const prefix = freshPrefix();
    const tls = await backend("127.0.0.1", namedBackend("tls"));
    const east = createRedisWriter(client, { prefix, cluster: "east" });
    await publish(east, "shop/tls", "tls.example.test", [tls]);
    const keys = clusterKeys(prefix, "east");
    // What a sync with TLS_STORE_KEY writes next to the records: a certificate hash and its version counter.
    await client.hset(keys.certificates, "shop/cert", '{"v":2,"id":"shop/cert"}');
    await client.incr(keys.certificatesVersion);
    // MONITOR's feed trails the replies: the test's own INCR must be in it before the Worker's commands count.
    await until(
      async () => commandsOn(0, "incr", keys.certificatesVersion).length,
      (count) => count > 0,
    );
    const start = monitor.commands.length;
    const mf = worker({ REDIS_URL: privateRedis.url, EDGESLICE_PREFIX: prefix, CACHE_TTL_MS: "100" });
    expect((await get(mf, "http://tls.example.test/")).body).toMatch(/^tls /);
    await readWhole(start, prefix, "east");
    const touched = monitor.commands
      .slice(start)
      .filter((args) => args.slice(1).some((arg) => arg.includes(":certificates")));
    expect(touched).toEqual([]);
  });

  it("serves a change within the TTL by re-reading only the changed record", async () => {
    const prefix = freshPrefix();
    const before = await backend("127.0.0.1", namedBackend("before"));
    const after = await backend("127.0.0.1", namedBackend("after"));
    const east = createRedisWriter(client, { prefix, cluster: "east" });
    await publish(east, "shop/web", "web.example.test", [before]);
    const start = monitor.commands.length;
    const mf = worker({ REDIS_URL: privateRedis.url, EDGESLICE_PREFIX: prefix, CACHE_TTL_MS: "100" });
    expect((await get(mf, "http://web.example.test/")).body).toMatch(/^before /);
    await readWhole(start, prefix, "east");

    const changedAt = monitor.commands.length;
    await east.putService(serviceRecordFromV1(record("shop/web", ["web.example.test"], [at(after)])));
    const seen = await until(() => get(mf, "http://web.example.test/"), bodyStartsWith("after "));

    expect(seen.body).toMatch(/^after /);
    const keys = clusterKeys(prefix, "east");
    expect(commandsOn(changedAt, "hmget", keys.services).map((args) => args.slice(2))).toContainEqual([
      "shop/web",
    ]);
    expect(commandsOn(changedAt, "hgetall", keys.services)).toEqual([]);
    expect(commandsOn(changedAt, "hgetall", keys.routes)).toEqual([]);
  }, 30_000);

  it("reads a cluster whole after its stream was trimmed past the isolate's last entry, and only that cluster", async () => {
    const prefix = freshPrefix();
    const before = await backend("127.0.0.1", namedBackend("before"));
    const after = await backend("127.0.0.1", namedBackend("after"));
    const other = await backend("127.0.0.1", namedBackend("west"));
    const east = createRedisWriter(client, { prefix, cluster: "east" });
    await publish(east, "shop/web", "web.example.test", [before]);
    await publish(createRedisWriter(client, { prefix, cluster: "west" }), "shop/api", "api.example.test", [
      other,
    ]);
    const start = monitor.commands.length;
    const mf = worker({ REDIS_URL: privateRedis.url, EDGESLICE_PREFIX: prefix, CACHE_TTL_MS: "100" });
    expect((await get(mf, "http://web.example.test/")).body).toMatch(/^before /);
    await readWhole(start, prefix, "west");

    const trimmedAt = monitor.commands.length;
    await east.putService(serviceRecordFromV1(record("shop/web", ["web.example.test"], [at(after)])));
    // Every entry gone, the change's own too: only the missing last entry tells the isolate it missed something.
    await client.xtrim(clusterKeys(prefix, "east").changes, "MAXLEN", 0);
    const seen = await until(() => get(mf, "http://web.example.test/"), bodyStartsWith("after "));

    expect(seen.body).toMatch(/^after /);
    expect(commandsOn(trimmedAt, "hgetall", clusterKeys(prefix, "east").services)).not.toEqual([]);
    expect(commandsOn(trimmedAt, "hgetall", clusterKeys(prefix, "west").services)).toEqual([]);
    expect((await get(mf, "http://api.example.test/")).body).toMatch(/^west /);
  }, 30_000);

  it("finds a cluster that appears later, and keeps a cluster that lost its records until it publishes again", async () => {
    const prefix = freshPrefix();
    const web = await backend("127.0.0.1", namedBackend("web"));
    const republished = await backend("127.0.0.1", namedBackend("republished"));
    const api = await backend("127.0.0.1", namedBackend("api"));
    const east = createRedisWriter(client, { prefix, cluster: "east" });
    await publish(east, "shop/web", "web.example.test", [web]);
    const mf = worker({ REDIS_URL: privateRedis.url, EDGESLICE_PREFIX: prefix, CACHE_TTL_MS: "100" });
    expect((await get(mf, "http://web.example.test/")).body).toMatch(/^web /);

    await publish(createRedisWriter(client, { prefix, cluster: "west" }), "shop/api", "api.example.test", [
      api,
    ]);
    const found = await until(
      () => get(mf, "http://api.example.test/"),
      (response) => response.status === 200,
    );
    expect(found.body).toMatch(/^api /);

    const keys = clusterKeys(prefix, "east");
    await client.del(keys.services, keys.routes, keys.hosts, keys.changes, keys.heartbeat, keys.lease);
    const statuses: number[] = [];
    for (let round = 0; round < 4; round++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      statuses.push((await get(mf, "http://web.example.test/")).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200]);

    await publish(east, "shop/web", "web.example.test", [republished]);
    const back = await until(() => get(mf, "http://web.example.test/"), bodyStartsWith("republished "));
    expect(back.body).toMatch(/^republished /);
  }, 30_000);

  it("answers a cold isolate's first request from its host's records, without the whole-store read", async () => {
    const prefix = freshPrefix();
    const web = await backend("127.0.0.1", namedBackend("web"));
    await publish(createRedisWriter(client, { prefix, cluster: "east" }), "shop/web", "web.example.test", [
      web,
    ]);
    // A user that may read everything but whole hashes: the whole-store read fails, a host's records do not.
    await client.call(
      "ACL",
      "SETUSER",
      "cold-only",
      "reset",
      "on",
      ">cold-secret",
      "~*",
      "&*",
      "+@all",
      "-hgetall",
    );
    const url = `redis://cold-only:cold-secret@127.0.0.1:${privateRedis.port}`;
    const mf = worker({ REDIS_URL: url, EDGESLICE_PREFIX: prefix, CACHE_TTL_MS: "100" });

    const first = await get(mf, "http://web.example.test/");

    expect(first.status).toBe(200);
    expect(first.body).toMatch(/^web /);
  }, 30_000);

  it("serves and follows changes for a router user with exactly the documented ACL rules", async () => {
    const prefix = freshPrefix();
    const before = await backend("127.0.0.1", namedBackend("before"));
    const after = await backend("127.0.0.1", namedBackend("after"));
    const east = createRedisWriter(client, { prefix, cluster: "east" });
    await publish(east, "shop/web", "web.example.test", [before]);
    await client.call("ACL", "SETUSER", "router", "reset", ">router-secret", ...routerAclRules(prefix));
    await client.call("ACL", "LOG", "RESET");
    const url = `redis://router:router-secret@127.0.0.1:${privateRedis.port}`;
    const mf = worker({ REDIS_URL: url, EDGESLICE_PREFIX: prefix, CACHE_TTL_MS: "100" });
    expect((await get(mf, "http://web.example.test/")).body).toMatch(/^before /);

    await east.putService(serviceRecordFromV1(record("shop/web", ["web.example.test"], [at(after)])));
    const seen = await until(() => get(mf, "http://web.example.test/"), bodyStartsWith("after "));

    expect(seen.body).toMatch(/^after /);
    // Every command the Worker sent (the registry, the host index, the deltas) is one the rules allow: a refused
    // one would have been logged here, and its read would have fallen back to the whole store.
    const refusals = (await client.call("ACL", "LOG")) as unknown[][];
    const refused = refusals
      .map((entry) => entry.map(String).join(" "))
      .filter((line) => line.includes("router"));
    expect(refused).toEqual([]);
  }, 30_000);
});

describe("the Worker following the store by deltas, with Redis going away", () => {
  let lonely: PrivateRedis;
  let lonelyClient: Redis;

  beforeAll(async () => {
    lonely = await startPrivateRedis();
    lonelyClient = new Redis(lonely.url, { maxRetriesPerRequest: 1 });
    lonelyClient.on("error", () => {});
  });
  afterAll(async () => {
    lonelyClient.disconnect();
    await lonely.stop();
  });

  it("keeps serving what it applied last when Redis stops answering", async () => {
    const prefix = freshPrefix();
    const before = await backend("127.0.0.1", namedBackend("before"));
    const after = await backend("127.0.0.1", namedBackend("after"));
    const east = createRedisWriter(lonelyClient, { prefix, cluster: "east" });
    await publish(east, "shop/web", "web.example.test", [before]);
    const mf = worker({ REDIS_URL: lonely.url, EDGESLICE_PREFIX: prefix, CACHE_TTL_MS: "50" });
    expect((await get(mf, "http://web.example.test/")).body).toMatch(/^before /);
    await east.putService(serviceRecordFromV1(record("shop/web", ["web.example.test"], [at(after)])));
    await until(() => get(mf, "http://web.example.test/"), bodyStartsWith("after "));

    await lonely.stop();
    const bodies: string[] = [];
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setTimeout(resolve, 80));
      bodies.push((await get(mf, "http://web.example.test/")).body.split(" ")[0] ?? "");
    }

    expect(bodies).toEqual(["after", "after", "after", "after", "after"]);
  }, 30_000);
});
