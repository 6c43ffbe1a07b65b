import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterKeys } from "../../../store/keys.js";
import { discoverClusters, loadCluster, loadSnapshot, readServices } from "../../../store/redis/snapshot.js";
import { STREAM_START_ID } from "../../../store/redis/streams.js";
import { fromV1 } from "../../../store/stored-records.js";
import { endpoint, heartbeat, putRaw, putRecord, serviceRecord } from "../../e2e/support/contract-layout.js";
import { capturingLogger } from "../../support/loggers.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../support/redis.js";

describe("redis snapshot loader", () => {
  let redis: Redis;
  const prefixes: string[] = [];
  const fresh = () => {
    const prefix = uniquePrefix("snap");
    prefixes.push(prefix);
    return prefix;
  };

  beforeAll(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  });

  it("loads every registered cluster with its services, lease state and stream position", async () => {
    const prefix = fresh();
    const { logger } = capturingLogger();
    await heartbeat(redis, prefix, "east", 60_000);
    await heartbeat(redis, prefix, "west", 60_000);
    await redis.del(clusterKeys(prefix, "west").lease);
    const web = serviceRecord({ cluster: "east", service: "shop/web", ipv4: [endpoint("10.0.0.1", 8080)] });
    await putRecord(redis, prefix, web);
    await putRecord(
      redis,
      prefix,
      serviceRecord({ cluster: "west", service: "shop/api", ipv6: [endpoint("fd00::1", 80)] }),
    );

    const snapshot = await loadSnapshot(redis, { prefix, logger, version: 7 });

    expect(snapshot.version).toBe(7);
    expect(snapshot.clusters.map((c) => [c.name, c.stale, [...c.services.keys()]])).toEqual([
      ["east", false, ["shop/web"]],
      ["west", true, ["shop/api"]],
    ]);
    expect(snapshot.clusters[0]?.services.get("shop/web")).toEqual(web);
    const [last] = await redis.xrevrange(clusterKeys(prefix, "east").changes, "+", "-", "COUNT", 1);
    const east = await loadCluster(redis, prefix, "east", logger);
    expect(east.lastChangeId).toBe(last?.[0]);
    expect(east.registered).toBe(true);
  });

  it("skips a bad record with its cluster, service and reason logged while the others serve", async () => {
    const prefix = fresh();
    const { logger, lines } = capturingLogger();
    await heartbeat(redis, prefix, "east", 60_000);
    await putRecord(
      redis,
      prefix,
      serviceRecord({ cluster: "east", service: "shop/good", ipv4: [endpoint("10.0.0.1", 80)] }),
    );
    await putRaw(redis, prefix, "east", "shop/json", "{not json");
    const future = { ...serviceRecord({ cluster: "east", service: "shop/future" }), v: 2 };
    await putRaw(redis, prefix, "east", "shop/future", JSON.stringify(future));
    await putRaw(
      redis,
      prefix,
      "east",
      "shop/alien",
      JSON.stringify(serviceRecord({ cluster: "west", service: "shop/alien" })),
    );
    await putRaw(
      redis,
      prefix,
      "east",
      "shop/renamed",
      JSON.stringify(serviceRecord({ cluster: "east", service: "shop/other" })),
    );

    const east = await loadCluster(redis, prefix, "east", logger);

    expect([...east.view.services.keys()]).toEqual(["shop/good"]);
    const skipped = lines.filter((line) => line.msg === "skipping invalid service record");
    expect(skipped.map((line) => line.service).sort()).toEqual([
      "shop/alien",
      "shop/future",
      "shop/json",
      "shop/renamed",
    ]);
    for (const line of skipped) {
      expect(line.cluster).toBe("east");
      expect(typeof line.reason).toBe("string");
    }
  });

  it("reports the stream start for a cluster with no change stream and finds no cluster without a heartbeat", async () => {
    const prefix = fresh();
    const { logger } = capturingLogger();
    await redis.hset(clusterKeys(prefix, "ghost").services, "a/b", "{}");
    await heartbeat(redis, prefix, "quiet", 60_000);

    expect(await discoverClusters(redis, prefix, logger)).toEqual(["quiet"]);
    const quiet = await loadCluster(redis, prefix, "quiet", logger);
    expect(quiet.lastChangeId).toBe(STREAM_START_ID);
    expect(quiet.view.services.size).toBe(0);
    const ghost = await loadCluster(redis, prefix, "ghost", logger);
    expect(ghost.registered).toBe(false);
  });

  it("reads chosen services, undefined for a deleted or invalid one", async () => {
    const prefix = fresh();
    const { logger } = capturingLogger();
    const web = serviceRecord({ cluster: "east", service: "shop/web", ipv4: [endpoint("10.0.0.2", 80)] });
    await putRecord(redis, prefix, web);
    await putRaw(redis, prefix, "east", "shop/bad", "[]");

    const read = await readServices(redis, prefix, "east", ["shop/web", "shop/gone", "shop/bad"], logger);

    expect([...read.entries()]).toEqual([
      ["shop/web", fromV1(web)],
      ["shop/gone", undefined],
      ["shop/bad", undefined],
    ]);
  });
});
