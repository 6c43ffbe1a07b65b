import { describe, expect, it } from "vitest";
import { sleep } from "../../../lib/async.js";
import { clusterKeys } from "../../../store/keys.js";
import { createRedisSnapshotSource } from "../../../store/redis/source.js";
import { endpoint, heartbeat, putRecord, serviceRecord } from "../../e2e/support/contract-layout.js";
import { capturingLogger } from "../../support/loggers.js";
import { deleteKeysWithPrefix, startPrivateRedis } from "../../support/redis.js";
import {
  ipsOf,
  newClient,
  sourceTestBed,
  staleOf,
  until,
  untilConnected,
  untilServingWeb,
  webRecord,
} from "./source-support.js";

describe("redis snapshot source: leases, lost keys and an unreachable Redis (fail static)", () => {
  const bed = sourceTestBed();

  it("marks a cluster stale when its lease lapses, fresh when it returns, and discovers new clusters", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    const source = await bed.startSource({ prefix });
    expect(source.current()?.clusters.map((c) => c.name)).toEqual(["east"]);

    await heartbeat(admin, prefix, "west", 60_000);
    await putRecord(
      admin,
      prefix,
      serviceRecord({ cluster: "west", service: "shop/api", ipv4: [endpoint("10.1.0.1", 80)] }),
    );
    await until(() => ipsOf(source.current(), "west", "shop/api") !== undefined, "the new cluster");

    await admin.del(clusterKeys(prefix, "east").lease);
    await until(() => staleOf(source, "east") === true, "east to go stale");
    expect(staleOf(source, "west")).toBe(false);
    await heartbeat(admin, prefix, "east", 60_000);
    await until(() => staleOf(source, "east") === false, "east fresh again");
  });

  it("keeps a cluster's last records, marked stale, when its keys vanish", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    const source = await bed.startSource({ prefix });

    await deleteKeysWithPrefix(admin, prefix);

    await until(() => source.current()?.clusters[0]?.stale === true, "east to go stale");
    expect(ipsOf(source.current(), "east", "shop/web")).toEqual(["10.0.0.1"]);
  });

  it("drops a Service deleted while the store had lost the cluster, once the cluster's heartbeat is back", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    for (const service of ["shop/web", "shop/old"]) {
      await putRecord(
        admin,
        prefix,
        serviceRecord({ cluster: "east", service, ipv4: [endpoint("10.0.0.9", 80)] }),
      );
    }
    const source = await bed.startSource({ prefix });
    expect(ipsOf(source.current(), "east", "shop/old")).toEqual(["10.0.0.9"]);

    // The store loses every key of east; the router keeps the last records, stale (fail static).
    await deleteKeysWithPrefix(admin, prefix);
    await until(() => staleOf(source, "east") === true, "east to go stale");
    expect(ipsOf(source.current(), "east", "shop/old")).toEqual(["10.0.0.9"]);

    // Meanwhile shop/old was deleted in Kubernetes: the sync re-pushes only shop/web, then beats.
    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    await heartbeat(admin, prefix, "east", 60_000);
    await until(() => staleOf(source, "east") === false, "east fresh again");
    await untilServingWeb(source, "10.0.0.1", "the re-pushed web");
    expect(ipsOf(source.current(), "east", "shop/old")).toBeUndefined();
  });

  it("serves the last snapshot while Redis is down and catches up after Redis restarts", async () => {
    const { redis, writer, prefix } = await bed.privateStoreServingWeb();
    const source = await bed.startSource({ url: redis.url, prefix });
    const served = source.current();
    expect(ipsOf(served, "east", "shop/web")).toEqual(["10.0.0.1"]);

    await redis.stop();
    await until(() => source.status().connected === false, "the source to notice");
    await sleep(300);
    expect(source.current()).toBe(served);

    // The restarted Redis is empty (no persistence); the sync re-publishes with a new backend.
    await redis.start();
    await until(() => writer.status === "ready", "the writer to reconnect");
    await heartbeat(writer, prefix, "east", 60_000);
    await putRecord(writer, prefix, webRecord("10.0.0.2"));

    await untilServingWeb(source, "10.0.0.2", "the store after restart");
    await until(() => source.status().connected, "the source to reconnect");
  });

  it("keeps following changes after a Redis blip shorter than the client's first reconnect delay", async () => {
    const { redis, writer, prefix } = await bed.privateStoreServingWeb();
    // The Node router's client settings: one retry per request, so a reconnect on the first attempt does not
    // flush the command queue; the blocking XREAD in flight is then dropped by ioredis without settling.
    const source = await bed.startSource({
      url: redis.url,
      prefix,
      client: { maxRetriesPerRequest: 1, retryStrategy: () => 1_500 },
      blockMs: 5_000,
    });
    // Let the feed's blocking XREAD be in flight when Redis goes away.
    await sleep(300);

    await redis.stop();
    await redis.start();
    await until(() => writer.status === "ready", "the writer to reconnect");
    await heartbeat(writer, prefix, "east", 60_000);
    await putRecord(writer, prefix, webRecord("10.0.0.2"));
    await untilServingWeb(source, "10.0.0.2", "the change after the blip");
    await putRecord(writer, prefix, webRecord("10.0.0.3"));
    await untilServingWeb(source, "10.0.0.3", "a later change through the feed");
    // The feed loop ends on close (a stuck XREAD used to keep close() waiting forever).
    await source.close();
  });

  it("has nothing to serve while Redis was never reachable, then loads once it answers", async () => {
    const redis = await startPrivateRedis();
    bed.onCleanup(() => redis.stop());
    await redis.stop();
    const reader = newClient(redis.url);
    const { logger } = capturingLogger();
    const source = createRedisSnapshotSource({
      redis: reader,
      prefix: "edgeslice",
      logger,
      now: Date.now,
      refreshIntervalMs: 100,
      blockMs: 200,
    });
    bed.onCleanup(async () => {
      await source.close();
      reader.disconnect();
    });
    await source.start();
    expect(source.current()).toBeUndefined();
    expect(source.status()).toMatchObject({ connected: false, version: 0 });

    await redis.start();
    const writer = newClient(redis.url);
    bed.onCleanup(async () => writer.disconnect());
    await untilConnected(writer);
    await heartbeat(writer, "edgeslice", "east", 60_000);
    await putRecord(writer, "edgeslice", webRecord("10.0.0.3"));

    await until(() => ipsOf(source.current(), "east", "shop/web") !== undefined, "the first load");
    await until(() => source.status().connected, "the source to report connected");
  });
});
