import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { decodeChangeEntry } from "../../../store/changes.js";
import { clusterKeys, clustersKey, hostIndexMembers, hostIndexRange } from "../../../store/keys.js";
import { createRedisWriter } from "../../../store/redis/writer.js";
import type { RouteRecord } from "../../../store/routes.js";
import { serializeServiceRecordV2 } from "../../../store/services.js";
import { serializeRoute } from "../../../store/store.js";
import {
  endpoint,
  routeRecord,
  routeRule,
  serviceRecord,
  serviceRecordV2,
} from "../../e2e/support/contract-layout.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";

const web = serviceRecordV2({
  cluster: "east",
  service: "shop/web",
  ports: [{ name: "http", number: 80, ipv4: [endpoint("10.0.0.1", 8080)] }],
});

function route(id: string, hostnames: string[]): RouteRecord {
  return routeRecord(id, { hostnames, rules: [routeRule([{ service: "shop/web", port: 80, weight: 1 }])] });
}

describe("redis cluster writer, schema version 2", () => {
  let redis: Redis;
  let prefix: string;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterEach(async () => deleteKeysWithPrefix(redis, prefix));
  afterAll(() => {
    redis.disconnect();
  });

  const freshWriter = (onRegistryError?: (error: unknown) => void) => {
    prefix = uniquePrefix("writer-v2");
    const writer = createRedisWriter(redis, {
      prefix,
      cluster: "east",
      ...(onRegistryError ? { onRegistryError } : {}),
    });
    return { writer, keys: clusterKeys(prefix, "east") };
  };
  const entries = async (key: string) => (await redis.xrange(key, "-", "+")).map(([, fields]) => fields);

  it("stores each record with its change entry {kind, id, op, v: 2}, which routers decode as that one change", async () => {
    const { writer, keys } = freshWriter();
    const shop = route("httproute:shop/web", ["shop.example.test"]);
    await writer.putService(web);
    await writer.putRoute(shop);
    await writer.removeRoute(shop.id);
    await writer.removeService("shop/web");

    expect(await entries(keys.changes)).toEqual([
      ["kind", "service", "id", "shop/web", "op", "put", "v", "2"],
      ["kind", "route", "id", "httproute:shop/web", "op", "put", "v", "2"],
      ["kind", "route", "id", "httproute:shop/web", "op", "delete", "v", "2"],
      ["kind", "service", "id", "shop/web", "op", "delete", "v", "2"],
    ]);
    const [first] = await redis.xrange(keys.changes, "-", "+");
    const fields = Object.fromEntries(
      (first?.[1] ?? []).flatMap((value, index, all) =>
        index % 2 === 0 ? [[value, all[index + 1] ?? ""]] : [],
      ),
    );
    expect(decodeChangeEntry(fields)).toEqual({
      ok: true,
      changes: [{ kind: "service", id: "shop/web", op: "put" }],
    });
    expect(await redis.exists(keys.services, keys.routes, keys.hosts)).toBe(0);
  });

  it("drops a version 1 sync's route of the same Service with the version 2 service record", async () => {
    const { writer, keys } = freshWriter();
    await writer.put(
      serviceRecord({ cluster: "east", service: "shop/web", ipv4: [endpoint("10.0.0.1", 8080)] }),
    );
    expect(await redis.hkeys(keys.routes)).toEqual(["shop/web"]);
    await writer.putService(web);
    expect(await redis.hget(keys.services, "shop/web")).toBe(serializeServiceRecordV2(web));
    expect(await redis.hkeys(keys.routes)).toEqual([]);
  });

  it("finds a host's routes and services with one ZRANGEBYLEX per host pattern, never a neighbour's", async () => {
    const { writer, keys } = freshWriter();
    const exact = route("httproute:shop/web", ["a.example.test"]);
    const longer = route("httproute:shop/longer", ["a.example.test.more"]);
    const wildcard = route("annotation:shop/wild", ["*.example.test"]);
    for (const each of [exact, longer, wildcard]) await writer.putRoute(each);
    expect(await redis.zrangebylex(keys.hosts, ...hostIndexRange("a.example.test"))).toEqual(
      hostIndexMembers(exact),
    );
    expect(await redis.zrangebylex(keys.hosts, ...hostIndexRange("*.example.test"))).toEqual(
      hostIndexMembers(wildcard),
    );
    expect(await redis.zrangebylex(keys.hosts, ...hostIndexRange("*"))).toEqual([]);
  });

  it("keeps the host index whole when a route is rewritten through EVAL after the script cache was flushed", async () => {
    const { writer, keys } = freshWriter();
    await writer.putRoute(route("httproute:shop/web", ["a.example.test"]));
    await redis.script("FLUSH");
    const second = route("httproute:shop/web", ["b.example.test"]);
    await writer.putRoute(second);
    await redis.script("FLUSH");
    await writer.putService(web);
    expect(await redis.zrange(keys.hosts, "0", "-1")).toEqual(hostIndexMembers(second));
    expect(await redis.hget(keys.routes, second.id)).toBe(serializeRoute(second));
  });

  it("registers the cluster with a heartbeat that wrote its record, not with one that found the store empty", async () => {
    const { writer } = freshWriter();
    expect(await writer.heartbeat({ holder: "s", leaseMs: 10_000, at: 1, ifRegistered: true })).toBe(false);
    expect(await redis.exists(clustersKey(prefix))).toBe(0);
    await writer.heartbeat({ holder: "s", leaseMs: 10_000, at: 2 });
    expect(await redis.smembers(clustersKey(prefix))).toEqual(["east"]);
  });

  it("reports a refused registration without failing the write it followed", async () => {
    const errors: unknown[] = [];
    const { writer, keys } = freshWriter((error) => errors.push(error));
    await redis.set(clustersKey(prefix), "not a set");
    await writer.putRoute(route("httproute:shop/web", ["a.example.test"]));
    expect(errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/WRONGTYPE/) })]);
    expect(await redis.hkeys(keys.routes)).toEqual(["httproute:shop/web"]);
  });

  it("never lets a transactional reader see a route without its host index members and change entry", async () => {
    const { writer, keys } = freshWriter();
    const reader = new Redis(REDIS_URL);
    let writing = true;
    const violations: string[] = [];
    let observations = 0;
    const readLoop = (async () => {
      while (writing) {
        const results = await reader
          .multi()
          .hkeys(keys.routes)
          .zrange(keys.hosts, "0", "-1")
          .xlen(keys.changes)
          .exec();
        const [routes, hosts, length] = (results ?? []).map(([, value]) => value) as [
          string[],
          string[],
          number,
        ];
        if (hosts.length !== routes.length)
          violations.push(`${routes.length} routes, ${hosts.length} members`);
        if (length < routes.length) violations.push(`${routes.length} routes, ${length} entries`);
        observations++;
      }
    })();
    for (let i = 0; i < 200; i++)
      await writer.putRoute(route(`httproute:shop/r${i}`, [`r${i}.example.test`]));
    writing = false;
    await readLoop;
    reader.disconnect();
    expect(observations).toBeGreaterThan(0);
    expect(violations).toEqual([]);
  });
});
