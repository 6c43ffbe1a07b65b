import { Cluster } from "ioredis";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { silentLogger } from "../../lib/logger.js";
import { routerAclRules } from "../../store/acl.js";
import { clusterKeys } from "../../store/keys.js";
import { createRedisClient, type RedisClient } from "../../store/redis/client.js";
import { createRedisSnapshotSource, type RedisSnapshotSource } from "../../store/redis/source.js";
import { redisTarget } from "../../store/redis/target.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { decodeServiceRecordV2 } from "../../store/services.js";
import { parseSyncConfig } from "../../sync/config.js";
import { type LiveSync, startLive } from "../../sync/live.js";
import { serviceObject } from "../fake-kube/fixtures.js";
import { startFakeKube } from "../fake-kube/server.js";
import { startBackend, type TestBackend } from "../reliability/support/backends.js";
import { readySlice } from "../reliability/support/kube-objects.js";
import { serviceRecord } from "../reliability/support/records.js";
import { eventually } from "../support/eventually.js";
import { uniquePrefix } from "../support/redis.js";
import { type PrivateRedisCluster, startPrivateRedisCluster } from "../support/redis-cluster.js";

/**
 * The entry points on a real 3-master Redis Cluster (REDIS_CLUSTER=true): the sync's live mode writes
 * through a Cluster client, the router's reader follows every cluster's change stream on its own
 * connection to that stream's master, and the Node router routes from it.
 */
describe("the sync and the Node router on Redis Cluster", () => {
  let redisCluster: PrivateRedisCluster;
  let client: Cluster;
  let seeds: string;
  const closers: (() => Promise<unknown>)[] = [];

  /** Cluster names whose keys live on different masters (`count` of them). */
  const onDistinctMasters = async (prefix: string, count: number): Promise<string[]> => {
    const slots = await client.cluster("SLOTS");
    const byMaster = new Map<number, string>();
    for (let index = 0; index < 100 && byMaster.size < count; index++) {
      const name = `k${index}`;
      const slot = Number(await client.cluster("KEYSLOT", clusterKeys(prefix, name).changes));
      const master = slots.find(([start, end]) => slot >= start && slot <= end)?.[2]?.[1];
      if (master !== undefined && !byMaster.has(master)) byMaster.set(master, name);
    }
    return [...byMaster.values()];
  };

  const publish = async (prefix: string, cluster: string, host: string, backend: TestBackend) => {
    const writer = createRedisWriter(client, { prefix, cluster });
    await writer.put(serviceRecord({ cluster, service: "shop/web", host, backends: [backend] }));
    await writer.heartbeat({ holder: `${cluster}-sync`, leaseMs: 60_000, at: Date.now() });
  };

  const backendOf = (source: RedisSnapshotSource, cluster: string): number | undefined =>
    source
      .current()
      ?.clusters.find((view) => view.name === cluster)
      ?.services.get("shop/web")?.ipv4.endpoints[0]?.port;

  /** Two loopback backends: records point at `first`, then a change moves them to `second`. */
  const twoBackends = async () => {
    const first = await startBackend("first");
    const second = await startBackend("second");
    closers.push(
      () => first.kill(),
      () => second.kill(),
    );
    return { first, second };
  };

  /** The router's reader over `redis`; with the default refresh a minute away only the feed brings changes. */
  const startReader = async (
    redis: RedisClient,
    prefix: string,
    options: { connectionName?: string; refreshIntervalMs?: number } = {},
  ) => {
    const source = createRedisSnapshotSource({
      redis,
      prefix,
      logger: silentLogger,
      now: Date.now,
      refreshIntervalMs: options.refreshIntervalMs ?? 60_000,
      blockMs: 200,
      ...(options.connectionName ? { connectionName: options.connectionName } : {}),
    });
    closers.push(() => source.close());
    await source.start();
    return source;
  };

  beforeAll(async () => {
    redisCluster = await startPrivateRedisCluster();
    seeds = redisCluster.nodes.map(({ host, port }) => `redis://${host}:${port}`).join(",");
    client = new Cluster([...redisCluster.nodes], { redisOptions: { maxRetriesPerRequest: 1 } });
    client.on("error", () => {});
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    client?.disconnect();
    await redisCluster?.stop();
  });

  it("follows the changes of clusters on three masters, each stream on its own connection to its master", async () => {
    const prefix = uniquePrefix("rcfeed");
    const names = await onDistinctMasters(prefix, 3);
    expect(names).toHaveLength(3);
    const { first, second } = await twoBackends();
    for (const name of names) await publish(prefix, name, `${name}.test`, first);
    const source = await startReader(client, prefix, { connectionName: "test-feed" });
    for (const name of names) expect(backendOf(source, name)).toBe(first.port);

    for (const name of names) await publish(prefix, name, `${name}.test`, second);
    await eventually(
      () => names.every((name) => backendOf(source, name) === second.port),
      10_000,
      "every cluster's change reached the reader",
    );
    // One feed connection per master, each named, none through the Cluster client.
    const feedsPerMaster = await Promise.all(
      client.nodes("master").map(async (node) => {
        const list = String(await node.client("LIST"));
        return list.split("\n").filter((line) => line.includes("name=test-feed")).length;
      }),
    );
    expect(feedsPerMaster).toEqual([1, 1, 1]);
    expect(source.status().connected).toBe(true);
  });

  it("resumes a cluster's feed on a new connection after its connection is killed", async () => {
    const prefix = uniquePrefix("rckill");
    const [name = "k0"] = await onDistinctMasters(prefix, 1);
    const { first, second } = await twoBackends();
    await publish(prefix, name, "web.test", first);
    const source = await startReader(client, prefix, { connectionName: "test-killed-feed" });
    await eventually(() => source.status().connected, 5_000, "the feed is verified");

    let killed = 0;
    for (const node of client.nodes("master")) {
      for (const line of String(await node.client("LIST")).split("\n")) {
        const id = /\bid=(\d+)/.exec(line)?.[1];
        if (id && line.includes("name=test-killed-feed"))
          killed += Number(await node.client("KILL", "ID", id));
      }
    }
    expect(killed).toBeGreaterThan(0);
    await publish(prefix, name, "web.test", second);
    await eventually(
      () => backendOf(source, name) === second.port,
      10_000,
      "the change after the kill arrived",
    );
  });

  it("follows changes on Redis Cluster as the documented read-only router ACL user", async () => {
    const prefix = uniquePrefix("rcacl");
    const names = await onDistinctMasters(prefix, 2);
    const { first, second } = await twoBackends();
    for (const name of names) await publish(prefix, name, `${name}.test`, first);
    // Redis Cluster does not propagate ACL users: each master gets the rule (docs/redis.md).
    const user = `router-${prefix.slice(-8)}`;
    for (const node of client.nodes("master")) {
      await node.call("ACL", "SETUSER", user, ">router-pw", ...routerAclRules(prefix));
    }
    closers.push(async () => {
      for (const node of client.nodes("master")) await node.call("ACL", "DELUSER", user);
    });
    const reader = createRedisClient(
      redisTarget(seeds.replaceAll("redis://", `redis://${user}:router-pw@`), true),
      {
        enableOfflineQueue: true,
        maxRetriesPerRequest: 1,
        retryStrategy: () => 100,
      },
    );
    reader.on("error", () => {});
    closers.push(async () => reader.disconnect());
    const source = await startReader(reader, prefix, { refreshIntervalMs: 200 });
    for (const name of names) expect(backendOf(source, name)).toBe(first.port);
    for (const name of names) await publish(prefix, name, `${name}.test`, second);
    await eventually(
      () => names.every((name) => backendOf(source, name) === second.port),
      10_000,
      "the changes reached the reader",
    );
    await eventually(() => source.status().connected, 5_000, "the reader reports itself connected");
    await expect(reader.set(clusterKeys(prefix, names[0] ?? "k0").lease, "x")).rejects.toThrow(/NOPERM/);
  });

  it("publishes a live cluster through REDIS_CLUSTER=true and the Node router routes by it", async () => {
    const prefix = uniquePrefix("rclive");
    const backend = await startBackend("pod");
    closers.push(() => backend.kill());
    const kube = await startFakeKube();
    closers.push(() => kube.close());
    kube.apply(serviceObject("shop", "web", { "edgeslice.io/hosts": "web.cluster.test" }));
    kube.apply(readySlice("shop", "web", [{ ip: backend.ip, port: backend.port }]));

    const sync: LiveSync = await startLive(
      parseSyncConfig({
        CLUSTER_NAME: "east",
        REDIS_URL: seeds,
        REDIS_CLUSTER: "true",
        EDGESLICE_PREFIX: prefix,
        SYNC_PORT: "0",
        SYNC_HOST: "127.0.0.1",
        LEADER_ELECTION: "false",
        DEBOUNCE_MS: "10",
        POD_NAME: "sync-east",
      }),
      { logger: silentLogger, kubeConfig: kube.kubeConfig() },
    );
    closers.push(() => sync.stop());
    const keys = clusterKeys(prefix, "east");
    await eventually(
      async () =>
        (await client.exists(keys.heartbeat)) === 1 &&
        (await client.hexists(keys.services, "shop/web")) === 1 &&
        (await client.hexists(keys.routes, "annotation:shop/web")) === 1,
      10_000,
      "the sync published into Redis Cluster",
    );
    const stored = decodeServiceRecordV2((await client.hget(keys.services, "shop/web")) ?? "");
    expect(stored.ok && stored.value.ports[0]?.ipv4.endpoints).toEqual([
      { ip: backend.ip, port: backend.port },
    ]);

    const router: NodeRouter = await startNodeRouter(
      parseRouterConfig({ REDIS_URL: seeds, REDIS_CLUSTER: "true", EDGESLICE_PREFIX: prefix, PORT: "0" }),
      { logger: silentLogger, host: "127.0.0.1", refreshIntervalMs: 100 },
    );
    closers.push(() => router.close());
    // The router listens before its first store load; requests answer 503 no_snapshot until it lands.
    await eventually(
      async () => (await fetch(`${router.url}/_edgeslice/healthz`)).status === 200,
      10_000,
      "the router loaded a snapshot",
    );
    const response = await request(router.url, { headers: { host: "web.cluster.test" } });
    await response.body.text();
    expect(response.statusCode).toBe(200);
    expect(response.headers["x-backend"]).toBe("pod");
    expect(backend.hits).toBe(1);
  });
});
