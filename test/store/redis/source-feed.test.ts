import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { routerAclRules } from "../../../store/acl.js";
import { clusterKeys } from "../../../store/keys.js";
import { serializeServiceRecord } from "../../../store/records.js";
import { createRedisSnapshotSource } from "../../../store/redis/source.js";
import {
  endpoint,
  heartbeat,
  putRaw,
  putRecord,
  removeRecord,
  serviceRecord,
} from "../../e2e/support/contract-layout.js";
import { capturingLogger } from "../../support/loggers.js";
import { REDIS_URL, startPrivateRedis } from "../../support/redis.js";
import {
  blockingClientId,
  ipsOf,
  newClient,
  sourceTestBed,
  uniqueConnectionName,
  until,
  untilConnected,
  untilServingWeb,
  webRecord,
} from "./source-support.js";

describe("redis snapshot source: loading and following the change feed", () => {
  const bed = sourceTestBed();

  it("has no snapshot before anything could be loaded", () => {
    const source = createRedisSnapshotSource({
      redis: newClient(REDIS_URL),
      prefix: bed.fresh(),
      logger: capturingLogger().logger,
      now: Date.now,
    });
    expect(source.current()).toBeUndefined();
    expect(source.status().version).toBe(0);
  });

  it("loads at start and serves the snapshot synchronously", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    await putRecord(admin, prefix, webRecord("10.0.0.1"));

    const source = await bed.startSource({ prefix });

    expect(ipsOf(source.current(), "east", "shop/web")).toEqual(["10.0.0.1"]);
    expect(source.status()).toMatchObject({ version: 1 });
    expect(source.status().lastLoadAt).toBeTypeOf("number");
  });

  it("picks up puts and deletes through the change stream, keeping unchanged clusters' views", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    await heartbeat(admin, prefix, "west", 60_000);
    await putRecord(
      admin,
      prefix,
      serviceRecord({ cluster: "west", service: "shop/api", ipv4: [endpoint("10.1.0.1", 80)] }),
    );
    const source = await bed.startSource({ prefix });
    const before = source.current();
    const westBefore = before?.clusters.find((c) => c.name === "west");

    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    await until(() => ipsOf(source.current(), "east", "shop/web") !== undefined, "the new service");
    await putRecord(admin, prefix, webRecord("10.0.0.2"));
    await untilServingWeb(source, "10.0.0.2", "the update");
    await removeRecord(admin, prefix, "east", "shop/web");
    await until(() => ipsOf(source.current(), "east", "shop/web") === undefined, "the delete");

    const after = source.current();
    expect(after).not.toBe(before);
    expect(after?.version).toBeGreaterThan(before?.version ?? Number.POSITIVE_INFINITY);
    expect(after?.clusters.find((c) => c.name === "west")).toBe(westBefore);
    expect(before?.clusters.find((c) => c.name === "east")?.services.size).toBe(0);
  });

  it("connects its change feed at start when given a lazily connecting client, as the Node router's", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    const { logger, lines } = capturingLogger();
    const redis = new Redis(REDIS_URL, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
    });
    redis.on("error", () => {});
    await redis.connect();
    const source = createRedisSnapshotSource({
      redis,
      prefix,
      logger,
      now: Date.now,
      refreshIntervalMs: 100,
      blockMs: 200,
    });
    bed.onCleanup(async () => {
      await source.close();
      redis.disconnect();
    });
    await source.start();

    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    await until(
      () => ipsOf(source.current(), "east", "shop/web") !== undefined,
      "the change through the feed",
    );
    expect(lines.filter((line) => line.level === "warn")).toEqual([]);
  });

  it("skips and logs a bad record arriving through the stream while the others keep serving", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    const { logger, lines } = capturingLogger();
    await heartbeat(admin, prefix, "east", 60_000);
    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    const source = await bed.startSource({ prefix, logger });

    await putRaw(admin, prefix, "east", "shop/broken", '{"v":1,"cluster":"east"}');
    await putRecord(
      admin,
      prefix,
      serviceRecord({ cluster: "east", service: "shop/after", ipv4: [endpoint("10.0.0.9", 80)] }),
    );

    await until(
      () => ipsOf(source.current(), "east", "shop/after") !== undefined,
      "the record after the bad one",
    );
    expect(ipsOf(source.current(), "east", "shop/web")).toEqual(["10.0.0.1"]);
    expect(source.current()?.clusters[0]?.services.has("shop/broken")).toBe(false);
    const skipped = lines.find((line) => line.msg === "skipping invalid service record");
    expect(skipped).toMatchObject({ cluster: "east", service: "shop/broken" });
  });

  it("resumes after its blocking connection is killed without losing a change made while it was down", async () => {
    const admin = bed.admin();
    const prefix = bed.fresh();
    const connectionName = uniqueConnectionName();
    await heartbeat(admin, prefix, "east", 60_000);
    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    const source = await bed.startSource({ prefix, connectionName });
    const clientId = await blockingClientId(admin, connectionName);

    // Kill and write in one transaction: the change lands while the reader has no connection.
    const keys = clusterKeys(prefix, "east");
    const changed = webRecord("10.0.0.7");
    await admin
      .multi()
      .client("KILL", "ID", clientId)
      .hset(keys.services, "shop/web", serializeServiceRecord(changed))
      .xadd(keys.changes, "*", "service", "shop/web", "op", "put")
      .exec();

    await untilServingWeb(source, "10.0.0.7", "the change made while down");
    const reconnected = await blockingClientId(admin, connectionName);
    expect(reconnected).not.toBe(clientId);
  });

  it("works as the read-only router ACL user, feed resume included", async () => {
    const redis = await startPrivateRedis();
    bed.onCleanup(() => redis.stop());
    const owner = newClient(redis.url);
    bed.onCleanup(async () => owner.disconnect());
    await untilConnected(owner);
    await owner.call("ACL", "SETUSER", "router", ">router-pw", ...routerAclRules("edgeslice"));
    const connectionName = uniqueConnectionName();
    const { logger, lines } = capturingLogger();
    const reader = new Redis(redis.url, {
      username: "router",
      password: "router-pw",
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 50,
    });
    reader.on("error", () => {});
    await untilConnected(reader);
    const source = createRedisSnapshotSource({
      redis: reader,
      prefix: "edgeslice",
      logger,
      now: Date.now,
      refreshIntervalMs: 100,
      blockMs: 200,
      connectionName,
    });
    bed.onCleanup(async () => {
      await source.close();
      reader.disconnect();
    });
    await heartbeat(owner, "edgeslice", "east", 60_000);
    await putRecord(owner, "edgeslice", webRecord("10.0.0.1"));
    await source.start();
    expect(ipsOf(source.current(), "east", "shop/web")).toEqual(["10.0.0.1"]);

    await owner.client("KILL", "ID", await blockingClientId(owner, connectionName));
    await putRecord(owner, "edgeslice", webRecord("10.0.0.2"));

    await untilServingWeb(source, "10.0.0.2", "the change as router user");
    await until(() => source.status().connected, "the source to report connected");
    expect(lines.filter((line) => JSON.stringify(line).includes("NOPERM"))).toEqual([]);
  });
});
