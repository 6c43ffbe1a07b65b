import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routerAclRules, syncAclRules } from "../../store/acl.js";
import { clusterFromHeartbeatKey, clusterKeys, clustersKey } from "../../store/keys.js";
import { SCHEMA_VERSION, type ServiceRecord } from "../../store/records.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { type PrivateRedis, startPrivateRedis } from "../support/redis.js";

const PREFIX = "edgeslice";

function record(cluster: string, service: string): ServiceRecord {
  return {
    v: SCHEMA_VERSION,
    cluster,
    service,
    hosts: ["web.example.com"],
    pathPrefix: "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints: [{ ip: "10.0.0.1", port: 8080 }], fallback: false, draining: [] },
    ipv6: { endpoints: [], fallback: false, draining: [] },
  };
}

// ACL users are server-wide state, so this runs on a private redis-server, never the shared one.
describe("redis ACL rules from store/acl.ts", () => {
  let server: PrivateRedis;
  let admin: Redis;
  const clients: Redis[] = [];

  const connectAs = async (username: string): Promise<Redis> => {
    const client = new Redis(server.url, { username, password: `${username}-pw`, maxRetriesPerRequest: 0 });
    client.on("error", () => {});
    clients.push(client);
    await client.ping();
    return client;
  };

  beforeAll(async () => {
    server = await startPrivateRedis();
    admin = new Redis(server.url);
    await admin.call("ACL", "SETUSER", "sync-east", ">sync-east-pw", ...syncAclRules(PREFIX, "east"));
    await admin.call("ACL", "SETUSER", "sync-west", ">sync-west-pw", ...syncAclRules(PREFIX, "west"));
    await admin.call("ACL", "SETUSER", "router", ">router-pw", ...routerAclRules(PREFIX));
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    admin.disconnect();
    await server.stop();
  });

  it("lets a cluster's sync user put, load, remove and heartbeat its own keys", async () => {
    const east = createRedisWriter(await connectAs("sync-east"), { prefix: PREFIX, cluster: "east" });
    await east.put(record("east", "shop/web"));
    await east.put(record("east", "shop/api"));
    expect([...(await east.load()).keys()].sort()).toEqual(["shop/api", "shop/web"]);
    await east.remove("shop/api");
    expect([...(await east.load()).keys()]).toEqual(["shop/web"]);
    await east.heartbeat({ holder: "sync-east-0", leaseMs: 10_000, at: 1 });
    const keys = clusterKeys(PREFIX, "east");
    expect(await admin.get(keys.lease)).toBe("sync-east-0");
    expect(await admin.xlen(keys.changes)).toBe(3);
  });

  it("refuses a cluster's sync user every write to another cluster's keys", async () => {
    const eastClient = await connectAs("sync-east");
    const west = clusterKeys(PREFIX, "west");
    const eastPretendingWest = createRedisWriter(eastClient, { prefix: PREFIX, cluster: "west" });
    await expect(eastPretendingWest.put(record("west", "shop/web"))).rejects.toThrow(/NOPERM/);
    await expect(eastPretendingWest.heartbeat({ holder: "x", leaseMs: 1000, at: 1 })).rejects.toThrow(
      /NOPERM/,
    );
    await expect(eastPretendingWest.load()).rejects.toThrow(/NOPERM/);
    await expect(eastClient.set(west.lease, "x")).rejects.toThrow(/NOPERM/);
    await expect(eastClient.del(west.services)).rejects.toThrow(/NOPERM/);
    expect(await admin.exists(west.services, west.routes, west.changes, west.heartbeat, west.lease)).toBe(0);
  });

  it("refuses a cluster's sync user every key a router reads as another cluster's, in any database, and its own keys never read as another's", async () => {
    const eastClient = await connectAs("sync-east");
    const west = clusterKeys(PREFIX, "west");
    const writes: [string, () => Promise<unknown>][] = [
      ["services", () => eastClient.hset(west.services, "pay/web", "{}")],
      ["routes", () => eastClient.hset(west.routes, "httproute:pay/web", "{}")],
      ["hosts", () => eastClient.zadd(west.hosts, 0, "pay.test\x1fhttproute:pay/web\x1f")],
      ["changes", () => eastClient.xadd(west.changes, "*", "kind", "route", "id", "x", "op", "put")],
      ["heartbeat", () => eastClient.set(west.heartbeat, "{}")],
      ["lease", () => eastClient.pexpire(west.lease, 1)],
      ["writer", () => eastClient.set(west.writer, "east")],
      ["claim", () => eastClient.set(west.claim, "east")],
      ["a script", () => eastClient.eval("return redis.call('DEL', KEYS[1])", 1, west.lease)],
    ];
    for (const [what, write] of writes) await expect(write(), what).rejects.toThrow(/NOPERM|can.t access/);
    await eastClient.select(1);
    await expect(eastClient.set(west.lease, "east"), "in database 1").rejects.toThrow(/NOPERM/);
    await eastClient.select(0);
    // Keys under its own tag that mimic another cluster's are read as no cluster at all (names are DNS labels).
    const mimic = `${PREFIX}:{east}:west}:heartbeat`;
    await eastClient.set(mimic, "{}");
    expect(clusterFromHeartbeatKey(PREFIX, mimic)).toBeUndefined();
    await eastClient.del(mimic);
    expect(await admin.exists(...Object.values(west))).toBe(0);
  });

  it("lets a cluster's sync user hold and hand over its writer fence, and no script reach another cluster", async () => {
    const eastClient = await connectAs("sync-east");
    const fence = { holder: "sync-east-0", ttlMs: 10_000 };
    const east = createRedisWriter(eastClient, { prefix: PREFIX, cluster: "east", fence });
    expect(await east.fence?.acquire(10_000)).toEqual({ held: true });
    await east.heartbeat({ holder: "sync-east-0", leaseMs: 10_000, at: 1 });
    await east.put(record("east", "shop/fenced"));
    const standby = createRedisWriter(eastClient, {
      prefix: PREFIX,
      cluster: "east",
      fence: { holder: "sync-east-1", ttlMs: 10_000 },
    });
    expect(await standby.fence?.acquire(10_000)).toEqual({ held: false, holder: "sync-east-0" });
    expect(await standby.fence?.holderNow()).toBe("sync-east-0");
    expect(await east.fence?.release()).toBe(true);
    expect(await standby.fence?.acquire(10_000)).toEqual({ held: true });

    const west = clusterKeys(PREFIX, "west");
    const own = clusterKeys(PREFIX, "east");
    const setKey = "return redis.call('SET', KEYS[1], 'x')";
    await expect(eastClient.eval(setKey, 1, west.writer)).rejects.toThrow(/NOPERM|can't access/);
    const setArgument = "return redis.call('SET', ARGV[1], 'x')";
    await expect(eastClient.eval(setArgument, 1, own.writer, west.writer)).rejects.toThrow(
      /NOPERM|can.t access/,
    );
    expect(await admin.exists(west.writer)).toBe(0);
  });

  it("lets a sync user write version 2 records and add its cluster to the registry, but never remove or overwrite the registry", async () => {
    const eastClient = await connectAs("sync-east");
    const east = createRedisWriter(eastClient, { prefix: PREFIX, cluster: "east" });
    await east.putService({ v: 2, cluster: "east", service: "shop/v2", ports: [] });
    await east.putRoute({
      v: 2,
      id: "httproute:shop/v2",
      source: "httproute",
      createdAt: 1,
      hostnames: ["v2.example.com"],
      wildcard: "suffix",
      rules: [
        { matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }], filters: {}, backends: [] },
      ],
    });
    await east.removeRoute("httproute:shop/v2");
    await east.removeService("shop/v2");
    const registry = clustersKey(PREFIX);
    expect(await admin.smembers(registry)).toContain("east");
    expect(await eastClient.sadd(registry, "east")).toBe(0);

    await expect(eastClient.srem(registry, "east")).rejects.toThrow(/NOPERM/);
    await expect(eastClient.del(registry)).rejects.toThrow(/NOPERM/);
    await expect(eastClient.set(registry, "x")).rejects.toThrow(/NOPERM/);
    await expect(eastClient.smembers(registry)).rejects.toThrow(/NOPERM/);
    await expect(eastClient.eval("return redis.call('SREM', KEYS[1], 'east')", 1, registry)).rejects.toThrow(
      /NOPERM|can.t access|No permissions/,
    );
    await expect(eastClient.sadd(`${PREFIX}:other`, "east")).rejects.toThrow(/NOPERM/);
    expect(await admin.smembers(registry)).toContain("east");
  });

  it("accepts the documented sync line typed into redis-cli as is, its selector split at the space", async () => {
    const typed = ["on", ">typed-pw", ...syncAclRules(PREFIX, "east").slice(1)].join(" ").split(" ");
    await admin.call("ACL", "SETUSER", "typed", ...typed);
    const client = new Redis(server.url, {
      username: "typed",
      password: "typed-pw",
      maxRetriesPerRequest: 0,
    });
    client.on("error", () => {});
    clients.push(client);
    expect(await client.sadd(clustersKey(PREFIX), "typed")).toBe(1);
    await expect(client.srem(clustersKey(PREFIX), "typed")).rejects.toThrow(/NOPERM/);
  });

  it("refuses a sync user commands outside the writer's set", async () => {
    const eastClient = await connectAs("sync-east");
    await expect(eastClient.flushall()).rejects.toThrow(/NOPERM/);
    await expect(eastClient.keys("*")).rejects.toThrow(/NOPERM/);
    await expect(eastClient.call("CONFIG", "GET", "maxmemory")).rejects.toThrow(/NOPERM/);
  });

  it("lets the router user read every cluster but write none", async () => {
    const west = createRedisWriter(await connectAs("sync-west"), { prefix: PREFIX, cluster: "west" });
    await west.put(record("west", "shop/web"));
    await west.heartbeat({ holder: "sync-west-0", leaseMs: 10_000, at: 1 });
    const keys = clusterKeys(PREFIX, "west");

    const router = await connectAs("router");
    expect(Object.keys(await router.hgetall(keys.services))).toEqual(["shop/web"]);
    expect(await router.get(keys.heartbeat)).toContain('"cluster":"west"');
    expect((await router.xrange(keys.changes, "-", "+")).length).toBe(1);
    const [, found] = await router.scan("0", "MATCH", `${PREFIX}:{*}:heartbeat`, "COUNT", 1000);
    expect(found).toContain(keys.heartbeat);

    await expect(router.hset(keys.services, "shop/web", "{}")).rejects.toThrow(/NOPERM/);
    await expect(router.set(keys.lease, "router")).rejects.toThrow(/NOPERM/);
    await expect(router.xadd(keys.changes, "*", "service", "shop/web", "op", "put")).rejects.toThrow(
      /NOPERM/,
    );
    await expect(router.del(keys.heartbeat)).rejects.toThrow(/NOPERM/);
  });
});
