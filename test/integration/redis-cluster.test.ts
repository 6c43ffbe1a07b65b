import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../lib/logger.js";
import { type ClusterKeys, clusterKeys } from "../../store/keys.js";
import { decodeHeartbeatRecord, serializeServiceRecord } from "../../store/records.js";
import { discoverClusters, loadSnapshot } from "../../store/redis/snapshot.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { endpoint, serviceRecord } from "../e2e/support/contract-layout.js";
import { uniquePrefix } from "../support/redis.js";
import { type PrivateRedisCluster, startPrivateRedisCluster } from "../support/redis-cluster.js";

/** Candidate cluster names; the tests pick among them by where Redis Cluster actually puts them. */
const CANDIDATES = Array.from({ length: 40 }, (_, i) => `c${i}`);

function allKeys(keys: ClusterKeys): string[] {
  return [keys.services, keys.routes, keys.changes, keys.heartbeat, keys.lease];
}

describe("the store's key layout and code on a real 3-master Redis Cluster", () => {
  let redisCluster: PrivateRedisCluster;
  let client: Cluster;
  const prefix = uniquePrefix("rcluster");
  /** Cluster name → hash slot of its keys and client port of the master serving that slot. */
  const placement = new Map<string, { slot: number; master: number }>();

  const keySlot = async (key: string): Promise<number> => Number(await client.cluster("KEYSLOT", key));

  /** One candidate name per master: clusters whose keys live on different nodes. */
  const onDistinctMasters = (): string[] => {
    const byMaster = new Map<number, string>();
    for (const [name, { master }] of placement) if (!byMaster.has(master)) byMaster.set(master, name);
    return [...byMaster.values()];
  };

  beforeAll(async () => {
    redisCluster = await startPrivateRedisCluster();
    client = new Cluster([...redisCluster.nodes], {
      clusterRetryStrategy: (times) => (times > 5 ? null : 100),
      redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2_000 },
    });
    client.on("error", () => {});
    const slots = await client.cluster("SLOTS");
    for (const name of CANDIDATES) {
      const slot = await keySlot(clusterKeys(prefix, name).heartbeat);
      const range = slots.find(([start, end]) => slot >= start && slot <= end);
      const master = range?.[2]?.[1];
      if (master !== undefined) placement.set(name, { slot, master });
    }
  });
  afterAll(async () => {
    client?.disconnect();
    await redisCluster?.stop();
  });

  it("puts every key of one cluster in one hash slot, and different clusters in different slots", async () => {
    for (const name of CANDIDATES) {
      const slots = await Promise.all(allKeys(clusterKeys(prefix, name)).map(keySlot));
      expect(new Set(slots), name).toEqual(new Set([placement.get(name)?.slot]));
    }
    const distinct = onDistinctMasters();
    expect(distinct).toHaveLength(redisCluster.ports.length);
    const slotsOfDistinct = distinct.map((name) => placement.get(name)?.slot);
    expect(new Set(slotsOfDistinct).size).toBe(distinct.length);
  });

  it("runs the writer's put, remove and heartbeat as MULTI transactions on a Cluster client", async () => {
    const [name = "c0"] = onDistinctMasters();
    const keys = clusterKeys(prefix, name);
    const writer = createRedisWriter(client, { prefix, cluster: name });
    const web = serviceRecord({ cluster: name, service: "shop/web", ipv4: [endpoint("10.0.0.1", 8080)] });

    await writer.put(web);
    expect(await client.hget(keys.services, "shop/web")).toBe(serializeServiceRecord(web));
    expect(await client.hexists(keys.routes, "shop/web")).toBe(1);
    await writer.remove("shop/web");
    expect(await client.hexists(keys.services, "shop/web")).toBe(0);
    expect(await client.hexists(keys.routes, "shop/web")).toBe(0);
    const entries = await client.xrange(keys.changes, "-", "+");
    expect(entries.map(([, fields]) => fields)).toEqual([
      ["service", "shop/web", "op", "put"],
      ["service", "shop/web", "op", "delete"],
    ]);

    await writer.heartbeat({ holder: "sync-a", leaseMs: 60_000, at: 1 });
    const beat = decodeHeartbeatRecord((await client.get(keys.heartbeat)) ?? "");
    expect(beat.ok && beat.value.holder).toBe("sync-a");
    expect(await client.pttl(keys.lease)).toBeGreaterThan(0);
  });

  it("never shows a reader's MULTI a record without its change entry while the writer runs", async () => {
    const [, name = "c1"] = onDistinctMasters();
    const keys = clusterKeys(prefix, name);
    const writer = createRedisWriter(client, { prefix, cluster: name });
    const services = Array.from({ length: 60 }, (_, i) => `shop/s${i}`);
    let writing = true;
    const writes = (async () => {
      try {
        for (const service of services) {
          await writer.put(serviceRecord({ cluster: name, service, ipv4: [endpoint("10.0.0.1", 80)] }));
        }
        for (const service of services.slice(0, 20)) await writer.remove(service);
      } finally {
        writing = false;
      }
    })();

    const reads: { records: number; routes: number; net: number }[] = [];
    while (writing && reads.length < 10_000) {
      const result = await client
        .multi()
        .hgetall(keys.services)
        .hgetall(keys.routes)
        .xrange(keys.changes, "-", "+")
        .exec();
      const [[, records], [, routes], [, entries]] = (result ?? []) as [
        [Error | null, Record<string, string>],
        [Error | null, Record<string, string>],
        [Error | null, [string, string[]][]],
      ];
      const net = entries.reduce((sum, [, fields]) => sum + (fields[3] === "put" ? 1 : -1), 0);
      reads.push({ records: Object.keys(records).length, routes: Object.keys(routes).length, net });
    }
    await writes;

    expect(reads.length).toBeGreaterThan(0);
    for (const read of reads) expect(read).toEqual({ records: read.net, routes: read.net, net: read.net });
    expect(await client.hlen(keys.services)).toBe(40);
  });

  it("loads a snapshot through a Cluster client from clusters living on different masters", async () => {
    const snapPrefix = uniquePrefix("rcsnap");
    const names = onDistinctMasters();
    for (const [index, name] of names.entries()) {
      const writer = createRedisWriter(client, { prefix: snapPrefix, cluster: name });
      await writer.heartbeat({ holder: "sync", leaseMs: 60_000, at: 1 });
      await writer.put(
        serviceRecord({
          cluster: name,
          service: `shop/web${index}`,
          ipv4: [endpoint(`10.0.0.${index + 1}`, 80)],
        }),
      );
    }
    const [quiet = "c0"] = names;
    await client.del(clusterKeys(snapPrefix, quiet).lease);

    // Each master holds the heartbeat of one cluster only: a single node's SCAN would miss the others.
    for (const node of client.nodes("master")) {
      const [, found] = await node.scan("0", "MATCH", `${snapPrefix}:*:heartbeat`, "COUNT", 1000);
      expect(found).toHaveLength(1);
    }
    expect(await discoverClusters(client, snapPrefix, silentLogger)).toEqual([...names].sort());

    const snapshot = await loadSnapshot(client, { prefix: snapPrefix, logger: silentLogger, version: 1 });
    const expected = names
      .map((name, index) => [name, name === quiet, [`shop/web${index}`]] as const)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    expect(snapshot.clusters.map((c) => [c.name, c.stale, [...c.services.keys()]])).toEqual(expected);
  });

  it("refuses one XREAD over two clusters' streams with CROSSSLOT, even when one master serves both", async () => {
    const [a = "c0", b = "c1"] = onDistinctMasters();
    const sameMaster = [...placement].filter(([, p]) => p.master === placement.get(a)?.master);
    const sibling = sameMaster.find(([, p]) => p.slot !== placement.get(a)?.slot)?.[0];
    expect(sibling).toBeDefined();
    const writer = createRedisWriter(client, { prefix, cluster: a });
    await writer.put(serviceRecord({ cluster: a, service: "shop/feed", ipv4: [endpoint("10.0.0.9", 80)] }));

    for (const other of [b, sibling ?? b]) {
      await expect(
        client.xread("STREAMS", clusterKeys(prefix, a).changes, clusterKeys(prefix, other).changes, "0", "0"),
      ).rejects.toThrow(/CROSSSLOT/);
    }
    // One read per cluster is what works: each stays in its cluster's slot.
    const perCluster = await client.xread("STREAMS", clusterKeys(prefix, a).changes, "0");
    expect(perCluster?.[0]?.[0]).toBe(clusterKeys(prefix, a).changes);
    expect(perCluster?.[0]?.[1].at(-1)?.[1]).toEqual(["service", "shop/feed", "op", "put"]);
  });

  it("refuses a client pipeline whose keys span clusters on different masters", async () => {
    const [a = "c0", b = "c1"] = onDistinctMasters();
    const pipeline = client
      .pipeline()
      .exists(clusterKeys(prefix, a).lease)
      .exists(clusterKeys(prefix, b).lease);
    await expect(pipeline.exec()).rejects.toThrow(/same slots allocation group/);
  });
});
