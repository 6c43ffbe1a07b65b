import { randomBytes } from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createJsonLogger, type Logger } from "../../../lib/logger.js";
import { routerAclRules } from "../../../store/acl.js";
import { clusterKeys } from "../../../store/keys.js";
import { serializeServiceRecord } from "../../../store/records.js";
import { createRedisSnapshotSource } from "../../../store/redis/source.js";
import { compareStreamIds, type StreamInfo, streamGapReason } from "../../../store/redis/streams.js";
import type { Snapshot } from "../../../store/store.js";
import {
  endpoint,
  heartbeat,
  putRaw,
  putRecord,
  removeRecord,
  serviceRecord,
} from "../../e2e/support/contract-layout.js";
import { deleteKeysWithPrefix, REDIS_URL, startPrivateRedis, uniquePrefix } from "../../support/redis.js";

const WAIT_MS = 10_000;

async function waitFor<T>(probe: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function ipsOf(snapshot: Snapshot | undefined, cluster: string, service: string): string[] | undefined {
  const record = snapshot?.clusters.find((c) => c.name === cluster)?.services.get(service);
  return record?.ipv4.endpoints.map((e) => e.ip);
}

/** shop/web of cluster east served by one IPv4 endpoint: the record most tests publish and change. */
function webRecord(ip: string) {
  return serviceRecord({ cluster: "east", service: "shop/web", ipv4: [endpoint(ip, 80)] });
}

/** Waits until the source serves shop/web of cluster east from `ip`. */
function untilServingWeb(source: { current(): Snapshot | undefined }, ip: string, what: string) {
  return waitFor(() => ipsOf(source.current(), "east", "shop/web")?.includes(ip), what);
}

function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    logger: createJsonLogger({ level: "debug", write: (line) => lines.push(JSON.parse(line)) }),
  };
}

function newClient(url: string, overrides: RedisOptions = {}): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 50,
    ...overrides,
  });
  client.on("error", () => {});
  return client;
}

describe("redis snapshot source", () => {
  let admin: Redis;
  const cleanups: (() => Promise<void>)[] = [];
  const prefixes: string[] = [];

  /** A private Redis (free to stop and restart) holding east's shop/web at 10.0.0.1, and a client writing it. */
  async function privateStoreServingWeb() {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const writer = newClient(redis.url);
    cleanups.push(async () => writer.disconnect());
    await new Promise<void>((resolve) => writer.once("ready", () => resolve()));
    const prefix = "edgeslice";
    await heartbeat(writer, prefix, "east", 60_000);
    await putRecord(writer, prefix, webRecord("10.0.0.1"));
    return { redis, writer, prefix };
  }

  async function startSource(options: {
    url?: string;
    prefix: string;
    connectionName?: string;
    logger?: Logger;
    client?: RedisOptions;
    blockMs?: number;
  }) {
    const redis = newClient(options.url ?? REDIS_URL, options.client);
    await new Promise<void>((resolve) => redis.once("ready", () => resolve()));
    const source = createRedisSnapshotSource({
      redis,
      prefix: options.prefix,
      logger: options.logger ?? capturingLogger().logger,
      now: Date.now,
      refreshIntervalMs: 100,
      blockMs: options.blockMs ?? 200,
      connectionName: options.connectionName,
    });
    cleanups.push(async () => {
      await source.close();
      redis.disconnect();
    });
    await source.start();
    return source;
  }

  function fresh(): string {
    const prefix = uniquePrefix("source");
    prefixes.push(prefix);
    return prefix;
  }

  beforeAll(() => {
    admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeysWithPrefix(admin, prefix);
    admin.disconnect();
  });

  it("has no snapshot before anything could be loaded", () => {
    const source = createRedisSnapshotSource({
      redis: newClient(REDIS_URL),
      prefix: fresh(),
      logger: capturingLogger().logger,
      now: Date.now,
    });
    expect(source.current()).toBeUndefined();
    expect(source.status().version).toBe(0);
  });

  it("loads at start and serves the snapshot synchronously", async () => {
    const prefix = fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    await putRecord(admin, prefix, webRecord("10.0.0.1"));

    const source = await startSource({ prefix });

    expect(ipsOf(source.current(), "east", "shop/web")).toEqual(["10.0.0.1"]);
    expect(source.status()).toMatchObject({ version: 1 });
    expect(source.status().lastLoadAt).toBeTypeOf("number");
  });

  it("picks up puts and deletes through the change stream, keeping unchanged clusters' views", async () => {
    const prefix = fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    await heartbeat(admin, prefix, "west", 60_000);
    await putRecord(
      admin,
      prefix,
      serviceRecord({ cluster: "west", service: "shop/api", ipv4: [endpoint("10.1.0.1", 80)] }),
    );
    const source = await startSource({ prefix });
    const before = source.current();
    const westBefore = before?.clusters.find((c) => c.name === "west");

    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    await waitFor(() => ipsOf(source.current(), "east", "shop/web"), "the new service");
    await putRecord(admin, prefix, webRecord("10.0.0.2"));
    await untilServingWeb(source, "10.0.0.2", "the update");
    await removeRecord(admin, prefix, "east", "shop/web");
    await waitFor(() => ipsOf(source.current(), "east", "shop/web") === undefined, "the delete");

    const after = source.current();
    expect(after).not.toBe(before);
    expect(after?.version).toBeGreaterThan(before?.version ?? Number.POSITIVE_INFINITY);
    expect(after?.clusters.find((c) => c.name === "west")).toBe(westBefore);
    expect(before?.clusters.find((c) => c.name === "east")?.services.size).toBe(0);
  });

  it("connects its change feed at start when given a lazily connecting client, as the Node router's", async () => {
    const prefix = fresh();
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
    cleanups.push(async () => {
      await source.close();
      redis.disconnect();
    });
    await source.start();

    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    await waitFor(() => ipsOf(source.current(), "east", "shop/web"), "the change through the feed");
    expect(lines.filter((line) => line.level === "warn")).toEqual([]);
  });

  it("skips and logs a bad record arriving through the stream while the others keep serving", async () => {
    const prefix = fresh();
    const { logger, lines } = capturingLogger();
    await heartbeat(admin, prefix, "east", 60_000);
    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    const source = await startSource({ prefix, logger });

    await putRaw(admin, prefix, "east", "shop/broken", '{"v":1,"cluster":"east"}');
    await putRecord(
      admin,
      prefix,
      serviceRecord({ cluster: "east", service: "shop/after", ipv4: [endpoint("10.0.0.9", 80)] }),
    );

    await waitFor(() => ipsOf(source.current(), "east", "shop/after"), "the record after the bad one");
    expect(ipsOf(source.current(), "east", "shop/web")).toEqual(["10.0.0.1"]);
    expect(source.current()?.clusters[0]?.services.has("shop/broken")).toBe(false);
    const skipped = lines.find((line) => line.msg === "skipping invalid service record");
    expect(skipped).toMatchObject({ cluster: "east", service: "shop/broken" });
  });

  it("resumes after its blocking connection is killed without losing a change made while it was down", async () => {
    const prefix = fresh();
    const connectionName = `edgeslice-test-${randomBytes(4).toString("hex")}`;
    await heartbeat(admin, prefix, "east", 60_000);
    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    const source = await startSource({ prefix, connectionName });
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

  it("reloads the whole cluster when its stream was trimmed past the reader's position", async () => {
    const prefix = fresh();
    const connectionName = `edgeslice-test-${randomBytes(4).toString("hex")}`;
    await heartbeat(admin, prefix, "east", 60_000);
    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    const { logger, lines } = capturingLogger();
    const source = await startSource({ prefix, connectionName, logger });
    const clientId = await blockingClientId(admin, connectionName);

    // The change to shop/web has its entry trimmed away: only a full reload can see it.
    const keys = clusterKeys(prefix, "east");
    const changed = webRecord("10.0.0.8");
    await admin
      .multi()
      .client("KILL", "ID", clientId)
      .hset(keys.services, "shop/web", serializeServiceRecord(changed))
      .xadd(keys.changes, "*", "service", "shop/web", "op", "put")
      .xadd(keys.changes, "*", "service", "shop/other", "op", "delete")
      .xtrim(keys.changes, "MAXLEN", 1)
      .exec();

    await untilServingWeb(source, "10.0.0.8", "the trimmed change");
    expect(lines.some((line) => line.msg === "reloading cluster" && line.cluster === "east")).toBe(true);
  });

  it("marks a cluster stale when its lease lapses, fresh when it returns, and discovers new clusters", async () => {
    const prefix = fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    const source = await startSource({ prefix });
    expect(source.current()?.clusters.map((c) => c.name)).toEqual(["east"]);

    await heartbeat(admin, prefix, "west", 60_000);
    await putRecord(
      admin,
      prefix,
      serviceRecord({ cluster: "west", service: "shop/api", ipv4: [endpoint("10.1.0.1", 80)] }),
    );
    await waitFor(() => ipsOf(source.current(), "west", "shop/api"), "the new cluster");

    await admin.del(clusterKeys(prefix, "east").lease);
    await waitFor(() => source.current()?.clusters.find((c) => c.name === "east")?.stale, "east to go stale");
    expect(source.current()?.clusters.find((c) => c.name === "west")?.stale).toBe(false);
    await heartbeat(admin, prefix, "east", 60_000);
    await waitFor(
      () => source.current()?.clusters.find((c) => c.name === "east")?.stale === false,
      "east fresh again",
    );
  });

  it("drops a Service deleted while the store had lost the cluster, once the cluster's heartbeat is back", async () => {
    const prefix = fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    for (const service of ["shop/web", "shop/old"]) {
      await putRecord(
        admin,
        prefix,
        serviceRecord({ cluster: "east", service, ipv4: [endpoint("10.0.0.9", 80)] }),
      );
    }
    const source = await startSource({ prefix });
    expect(ipsOf(source.current(), "east", "shop/old")).toEqual(["10.0.0.9"]);

    // The store loses every key of east; the router keeps the last records, stale (fail static).
    await deleteKeysWithPrefix(admin, prefix);
    await waitFor(() => source.current()?.clusters.find((c) => c.name === "east")?.stale, "east to go stale");
    expect(ipsOf(source.current(), "east", "shop/old")).toEqual(["10.0.0.9"]);

    // Meanwhile shop/old was deleted in Kubernetes: the sync re-pushes only shop/web, then beats.
    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    await heartbeat(admin, prefix, "east", 60_000);
    await waitFor(
      () => source.current()?.clusters.find((c) => c.name === "east" && !c.stale),
      "east fresh again",
    );
    await untilServingWeb(source, "10.0.0.1", "the re-pushed web");
    expect(ipsOf(source.current(), "east", "shop/old")).toBeUndefined();
  });

  it("serves the last snapshot while Redis is down and catches up after Redis restarts", async () => {
    const { redis, writer, prefix } = await privateStoreServingWeb();
    const source = await startSource({ url: redis.url, prefix });
    const served = source.current();
    expect(ipsOf(served, "east", "shop/web")).toEqual(["10.0.0.1"]);

    await redis.stop();
    await waitFor(() => source.status().connected === false, "the source to notice");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(source.current()).toBe(served);

    // The restarted Redis is empty (no persistence); the sync re-publishes with a new backend.
    await redis.start();
    await waitFor(() => writer.status === "ready", "the writer to reconnect");
    await heartbeat(writer, prefix, "east", 60_000);
    await putRecord(writer, prefix, webRecord("10.0.0.2"));

    await untilServingWeb(source, "10.0.0.2", "the store after restart");
    await waitFor(() => source.status().connected, "the source to reconnect");
  });

  it("keeps following changes after a Redis blip shorter than the client's first reconnect delay", async () => {
    const { redis, writer, prefix } = await privateStoreServingWeb();
    // The Node router's client settings: one retry per request, so a reconnect on the first attempt does not
    // flush the command queue; the blocking XREAD in flight is then dropped by ioredis without settling.
    const source = await startSource({
      url: redis.url,
      prefix,
      client: { maxRetriesPerRequest: 1, retryStrategy: () => 1_500 },
      blockMs: 5_000,
    });
    // Let the feed's blocking XREAD be in flight when Redis goes away.
    await new Promise((resolve) => setTimeout(resolve, 300));

    await redis.stop();
    await redis.start();
    await waitFor(() => writer.status === "ready", "the writer to reconnect");
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
    cleanups.push(() => redis.stop());
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
    cleanups.push(async () => {
      await source.close();
      reader.disconnect();
    });
    await source.start();
    expect(source.current()).toBeUndefined();
    expect(source.status()).toMatchObject({ connected: false, version: 0 });

    await redis.start();
    const writer = newClient(redis.url);
    cleanups.push(async () => writer.disconnect());
    await new Promise<void>((resolve) => writer.once("ready", () => resolve()));
    await heartbeat(writer, "edgeslice", "east", 60_000);
    await putRecord(writer, "edgeslice", webRecord("10.0.0.3"));

    await waitFor(() => ipsOf(source.current(), "east", "shop/web"), "the first load");
    await waitFor(() => source.status().connected, "the source to report connected");
  });

  it("works as the read-only router ACL user, feed resume included", async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const owner = newClient(redis.url);
    cleanups.push(async () => owner.disconnect());
    await new Promise<void>((resolve) => owner.once("ready", () => resolve()));
    await owner.call("ACL", "SETUSER", "router", ">router-pw", ...routerAclRules("edgeslice"));
    const connectionName = `edgeslice-test-${randomBytes(4).toString("hex")}`;
    const { logger, lines } = capturingLogger();
    const reader = new Redis(redis.url, {
      username: "router",
      password: "router-pw",
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 50,
    });
    reader.on("error", () => {});
    await new Promise<void>((resolve) => reader.once("ready", () => resolve()));
    const source = createRedisSnapshotSource({
      redis: reader,
      prefix: "edgeslice",
      logger,
      now: Date.now,
      refreshIntervalMs: 100,
      blockMs: 200,
      connectionName,
    });
    cleanups.push(async () => {
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
    await waitFor(() => source.status().connected, "the source to report connected");
    expect(lines.filter((line) => JSON.stringify(line).includes("NOPERM"))).toEqual([]);
  });

  it("keeps a cluster's last records, marked stale, when its keys vanish", async () => {
    const prefix = fresh();
    await heartbeat(admin, prefix, "east", 60_000);
    await putRecord(admin, prefix, webRecord("10.0.0.1"));
    const source = await startSource({ prefix });

    await deleteKeysWithPrefix(admin, prefix);

    await waitFor(() => source.current()?.clusters[0]?.stale, "east to go stale");
    expect(ipsOf(source.current(), "east", "shop/web")).toEqual(["10.0.0.1"]);
  });
});

async function blockingClientId(admin: Redis, name: string): Promise<string> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const list = await admin.client("LIST");
    const line = String(list)
      .split("\n")
      .find((entry) => entry.includes(` name=${name} `) && entry.includes("cmd=xread"));
    const id = line ? /(?:^|\s)id=(\d+)/.exec(line)?.[1] : undefined;
    if (id) return id;
    if (Date.now() > deadline) throw new Error(`no blocking client named ${name}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("stream positions", () => {
  it.each([
    ["1-0", "1-0", 0],
    ["1-1", "1-0", 1],
    ["2-0", "10-0", -1],
    ["1700000000000-5", "1700000000000-12", -1],
  ])("orders %s against %s as %i", (a, b, expected) => {
    expect(compareStreamIds(a, b)).toBe(expected);
  });

  const info = (fields: Partial<StreamInfo>): StreamInfo => ({
    lastGeneratedId: "9-0",
    maxDeletedEntryId: "0-0",
    firstEntryId: "3-0",
    entriesAdded: 9,
    length: 9,
    ...fields,
  });
  it.each([
    ["a caught-up reader", info({}), "4-0", undefined],
    ["a reader whose entry is the oldest", info({ firstEntryId: "4-0" }), "4-0", undefined],
    ["a reader whose entry was trimmed", info({ firstEntryId: "7-0", length: 3 }), "4-0", "trimmed"],
    ["a reader past an XDEL", info({ maxDeletedEntryId: "6-0" }), "4-0", "deleted"],
    ["a reset stream", info({ lastGeneratedId: "3-0", firstEntryId: "1-0" }), "4-0", "reset"],
    ["a reader from an empty stream, nothing removed", info({ firstEntryId: "1-0" }), "0-0", undefined],
    [
      "a reader from an empty stream, some trimmed",
      info({ firstEntryId: "7-0", length: 3 }),
      "0-0",
      "trimmed",
    ],
    [
      "Redis 6, a reader from an empty stream",
      info({ maxDeletedEntryId: undefined, entriesAdded: undefined, firstEntryId: "7-0" }),
      "0-0",
      "trimmed",
    ],
  ])("judges %s", (_label, info, lastId, expected) => {
    const reason = streamGapReason(info, lastId);
    if (expected === undefined) expect(reason).toBeUndefined();
    else expect(reason).toContain(expected);
  });
});
