import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { clusterKeys } from "../../../store/keys.js";
import {
  decodeHeartbeatRecord,
  decodeRouteRecord,
  decodeServiceRecord,
  SCHEMA_VERSION,
  type ServiceRecord,
  serializeServiceRecord,
} from "../../../store/records.js";
import { createRedisWriter } from "../../../store/redis/writer.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";

function record(service: string, ips: string[], cluster = "east"): ServiceRecord {
  return {
    v: SCHEMA_VERSION,
    cluster,
    service,
    hosts: [`${service.replace("/", "-")}.example.com`],
    pathPrefix: "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints: ips.map((ip) => ({ ip, port: 8080 })), fallback: false, draining: [] },
    ipv6: { endpoints: [], fallback: false, draining: [] },
  };
}

describe("redis cluster writer", () => {
  let redis: Redis;
  let prefix: string;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterEach(async () => deleteKeysWithPrefix(redis, prefix));
  afterAll(() => {
    redis.disconnect();
  });

  const freshWriter = (streamMaxLen?: number) => {
    prefix = uniquePrefix("writer");
    const options =
      streamMaxLen === undefined ? { prefix, cluster: "east" } : { prefix, cluster: "east", streamMaxLen };
    return { writer: createRedisWriter(redis, options), keys: clusterKeys(prefix, "east") };
  };

  it("stores the record, its route and a put change entry", async () => {
    const { writer, keys } = freshWriter();
    const rec = record("shop/web", ["10.0.0.1"]);
    await writer.put(rec);

    expect(await redis.hget(keys.services, "shop/web")).toBe(serializeServiceRecord(rec));
    const route = decodeRouteRecord((await redis.hget(keys.routes, "shop/web")) ?? "");
    expect(route).toEqual({
      ok: true,
      value: {
        v: SCHEMA_VERSION,
        service: "shop/web",
        hosts: ["shop-web.example.com"],
        pathPrefix: "/",
        port: rec.port,
      },
    });
    const entries = await redis.xrange(keys.changes, "-", "+");
    expect(entries.map(([, fields]) => fields)).toEqual([["service", "shop/web", "op", "put"]]);
  });

  it("removes record and route together and records a delete entry", async () => {
    const { writer, keys } = freshWriter();
    await writer.put(record("shop/web", ["10.0.0.1"]));
    await writer.put(record("shop/api", ["10.0.0.2"]));
    await writer.remove("shop/web");

    expect(await redis.hkeys(keys.services)).toEqual(["shop/api"]);
    expect(await redis.hkeys(keys.routes)).toEqual(["shop/api"]);
    const entries = await redis.xrange(keys.changes, "-", "+");
    expect(entries.map(([, fields]) => fields).at(-1)).toEqual(["service", "shop/web", "op", "delete"]);
  });

  it("loads every stored record as its serialised string", async () => {
    const { writer } = freshWriter();
    const web = record("shop/web", ["10.0.0.1"]);
    const api = record("shop/api", ["10.0.0.2", "10.0.0.3"]);
    await writer.put(web);
    await writer.put(api);
    const loaded = await writer.load();
    expect(loaded).toEqual(
      new Map([
        ["shop/web", serializeServiceRecord(web)],
        ["shop/api", serializeServiceRecord(api)],
      ]),
    );
    for (const raw of loaded.values()) expect(decodeServiceRecord(raw).ok).toBe(true);
  });

  it("loads an empty map for a cluster that never wrote", async () => {
    const { writer } = freshWriter();
    expect((await writer.load()).size).toBe(0);
  });

  it("refuses a record of another cluster", async () => {
    const { writer, keys } = freshWriter();
    await expect(writer.put(record("shop/web", ["10.0.0.1"], "west"))).rejects.toThrow(/west/);
    expect(await redis.exists(keys.services, keys.changes)).toBe(0);
  });

  it("writes a heartbeat without expiry and a lease that Redis expires", async () => {
    const { writer, keys } = freshWriter();
    await writer.heartbeat({ holder: "sync-0", leaseMs: 15_000, at: 1234 });

    const beat = decodeHeartbeatRecord((await redis.get(keys.heartbeat)) ?? "");
    expect(beat).toEqual({
      ok: true,
      value: { v: SCHEMA_VERSION, cluster: "east", holder: "sync-0", at: 1234, leaseMs: 15_000 },
    });
    expect(await redis.pttl(keys.heartbeat)).toBe(-1);
    expect(await redis.get(keys.lease)).toBe("sync-0");
    const leaseTtl = await redis.pttl(keys.lease);
    expect(leaseTtl).toBeGreaterThan(0);
    expect(leaseTtl).toBeLessThanOrEqual(15_000);
  });

  it("only replaces an existing heartbeat record when asked to, and reports a record the store lost", async () => {
    const { writer, keys } = freshWriter();
    expect(await writer.heartbeat({ holder: "sync-0", leaseMs: 15_000, at: 1, ifRegistered: true })).toBe(
      false,
    );
    expect(await redis.exists(keys.heartbeat)).toBe(0);
    expect(await writer.heartbeat({ holder: "sync-0", leaseMs: 15_000, at: 2 })).toBe(true);
    expect(await writer.heartbeat({ holder: "sync-0", leaseMs: 15_000, at: 3, ifRegistered: true })).toBe(
      true,
    );
    expect(decodeHeartbeatRecord((await redis.get(keys.heartbeat)) ?? "")).toMatchObject({
      value: { at: 3 },
    });

    await redis.del(keys.heartbeat);
    expect(await writer.heartbeat({ holder: "sync-0", leaseMs: 15_000, at: 4, ifRegistered: true })).toBe(
      false,
    );
    expect(await redis.exists(keys.heartbeat)).toBe(0);
  });

  it("keeps the writer fence with its own TTL and writes since when the API server is unreachable", async () => {
    prefix = uniquePrefix("writer");
    const keys = clusterKeys(prefix, "east");
    const writer = createRedisWriter(redis, {
      prefix,
      cluster: "east",
      fence: { holder: "sync-0", ttlMs: 10_000 },
    });
    await writer.heartbeat({ holder: "sync-0", leaseMs: 15_000, at: 5, apiserverUnreachableSince: 4 });
    expect(await redis.get(keys.writer)).toBe("sync-0");
    const fenceTtl = await redis.pttl(keys.writer);
    expect(fenceTtl).toBeGreaterThan(0);
    expect(fenceTtl).toBeLessThanOrEqual(10_000);
    expect(decodeHeartbeatRecord((await redis.get(keys.heartbeat)) ?? "")).toMatchObject({
      ok: true,
      value: { holder: "sync-0", at: 5, apiserverUnreachableSince: 4 },
    });
    expect(() =>
      createRedisWriter(redis, { prefix, cluster: "east", fence: { holder: "sync-0", ttlMs: 0 } }),
    ).toThrow(/TTL/);
  });

  it("writes through EVAL when the server's script cache does not hold the script (a restart, SCRIPT FLUSH)", async () => {
    const { writer, keys } = freshWriter();
    await writer.put(record("shop/web", ["10.0.0.1"]));
    await redis.script("FLUSH");
    await writer.put(record("shop/web", ["10.0.0.2"]));
    await writer.remove("shop/web");
    await redis.script("FLUSH");
    expect(await writer.heartbeat({ holder: "sync-0", leaseMs: 15_000, at: 1 })).toBe(true);
    expect(await redis.xlen(keys.changes)).toBe(3);
    expect(await redis.exists(keys.heartbeat, keys.lease)).toBe(2);
  });

  it("caps the change stream near the configured length", async () => {
    const { writer, keys } = freshWriter(50);
    for (let i = 0; i < 600; i++) await writer.put(record(`shop/s${i % 7}`, [`10.0.0.${i % 250}`]));
    const length = await redis.xlen(keys.changes);
    // `MAXLEN ~` trims whole radix-tree nodes (stream-node-max-entries, 100 by default), so up to one
    // node more than the cap may remain; far fewer than the 600 appended.
    expect(length).toBeGreaterThanOrEqual(50);
    expect(length).toBeLessThanOrEqual(150);
  });

  it("never lets a transactional reader see a record without its route and put entry", async () => {
    const { writer, keys } = freshWriter();
    const reader = new Redis(REDIS_URL);
    let writing = true;
    const violations: string[] = [];
    let observations = 0;
    const readLoop = (async () => {
      for (let round = 0; round < 10_000 && writing; round++) {
        const results = await reader
          .multi()
          .hkeys(keys.services)
          .hkeys(keys.routes)
          .xrange(keys.changes, "-", "+")
          .exec();
        const [services, routes, changes] = (results ?? []).map(([, value]) => value) as [
          string[],
          string[],
          [string, string[]][],
        ];
        const announced = new Set(changes.filter(([, f]) => f[3] === "put").map(([, f]) => f[1]));
        for (const service of services) {
          if (!routes.includes(service)) violations.push(`${service} without route`);
          if (!announced.has(service)) violations.push(`${service} without change entry`);
        }
        observations++;
      }
    })();
    for (let i = 0; i < 300; i++) await writer.put(record(`shop/s${i}`, ["10.0.0.1"]));
    writing = false;
    await readLoop;
    reader.disconnect();
    expect(observations).toBeGreaterThan(0);
    expect(violations).toEqual([]);
    expect(await redis.hlen(keys.services)).toBe(300);
  });
});
