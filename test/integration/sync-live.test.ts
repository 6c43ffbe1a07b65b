import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../lib/logger.js";
import { clusterKeys } from "../../store/keys.js";
import { decodeServiceRecord } from "../../store/records.js";
import { parseSyncConfig, type SyncConfig } from "../../sync/config.js";
import { type LiveSync, startLive } from "../../sync/live.js";
import { type FakeKube, startFakeKube } from "../fake-kube/server.js";
import {
  deleteKeysWithPrefix,
  type PrivateRedis,
  REDIS_URL,
  startPrivateRedis,
  uniquePrefix,
} from "../support/redis.js";
import { startRedisMonitor } from "../support/redis-monitor.js";

function service(
  name: string,
  annotations: Record<string, string> = { "edgeslice.io/hosts": `${name}.example.com` },
) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "shop", annotations },
    spec: { ports: [{ name: "http", port: 80, protocol: "TCP" }] },
  };
}

function slice(serviceName: string, ips: string[], suffix = "a") {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `${serviceName}-${suffix}`,
      namespace: "shop",
      labels: { "kubernetes.io/service-name": serviceName },
    },
    addressType: "IPv4",
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
  };
}

async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await probe();
  while (!accept(last)) {
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
    last = await probe();
  }
  return last;
}

function configFor(prefix: string, redisUrl: string, extra: Record<string, string> = {}): SyncConfig {
  return parseSyncConfig({
    CLUSTER_NAME: "east",
    REDIS_URL: redisUrl,
    EDGESLICE_PREFIX: prefix,
    SYNC_PORT: "0",
    SYNC_HOST: "127.0.0.1",
    LEADER_ELECTION: "false",
    DEBOUNCE_MS: "20",
    HEARTBEAT_MS: "200",
    POD_NAME: "sync-test",
    ...extra,
  });
}

describe("live sync against the fake API server and real Redis", () => {
  let kube: FakeKube;
  let redis: Redis;
  let prefix: string;
  let live: LiveSync | undefined;
  let privateRedis: PrivateRedis | undefined;

  const endpointsOf = async (client: Redis, name: string): Promise<string[] | null> => {
    const raw = await client.hget(clusterKeys(prefix, "east").services, `shop/${name}`);
    if (raw === null) return null;
    const decoded = decodeServiceRecord(raw);
    return decoded.ok ? decoded.value.ipv4.endpoints.map((e) => e.ip) : null;
  };
  const same = (expected: string[] | null) => (value: string[] | null) =>
    JSON.stringify(value) === JSON.stringify(expected);

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(() => {
    redis.disconnect();
  });
  afterEach(async () => {
    await live?.stop();
    live = undefined;
    await kube?.close();
    await privateRedis?.stop();
    privateRedis = undefined;
    await deleteKeysWithPrefix(redis, prefix);
  });

  const begin = async (extra: Record<string, string> = {}, redisUrl = REDIS_URL) => {
    prefix = uniquePrefix("live");
    kube = await startFakeKube();
    live = await startLive(configFor(prefix, redisUrl, extra), {
      logger: silentLogger,
      kubeConfig: kube.kubeConfig(),
    });
    return live;
  };

  it("follows slice create, update and delete, and the change stream records each", async () => {
    const sync = await begin();
    kube.apply(service("web"));
    kube.apply(slice("web", ["10.0.0.1", "10.0.0.2"]));
    await eventually(() => endpointsOf(redis, "web"), same(["10.0.0.1", "10.0.0.2"]));
    expect(sync.publishing()).toBe(true);

    kube.apply(slice("web", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]));
    await eventually(() => endpointsOf(redis, "web"), same(["10.0.0.1", "10.0.0.2", "10.0.0.3"]));

    kube.remove("Service", "shop", "web");
    await eventually(() => endpointsOf(redis, "web"), same(null));
    const keys = clusterKeys(prefix, "east");
    expect(await redis.hexists(keys.routes, "shop/web")).toBe(0);
    const ops = (await redis.xrange(keys.changes, "-", "+")).map(([, fields]) => `${fields[1]} ${fields[3]}`);
    expect(ops.at(-1)).toBe("shop/web delete");
    expect(ops.filter((op) => op === "shop/web put").length).toBeGreaterThanOrEqual(2);
    expect(await redis.get(keys.lease)).toBe("sync-test");
  });

  it("publishes nothing before the first full list has synced", async () => {
    prefix = uniquePrefix("live");
    kube = await startFakeKube();
    kube.apply(service("web"));
    kube.apply(slice("web", ["10.0.0.1"]));
    kube.failNext(3, 403, { verb: "list", kind: "EndpointSlice" });
    live = await startLive(configFor(prefix, REDIS_URL), {
      logger: silentLogger,
      kubeConfig: kube.kubeConfig(),
    });
    const ready = await fetch(`http://127.0.0.1:${live.healthPort}/readyz`);
    expect(ready.status).toBe(503);
    expect(await redis.exists(clusterKeys(prefix, "east").services)).toBe(0);
    expect(live.publishing()).toBe(false);
    // Once the list succeeds (backoff after the 403s) everything appears.
    await eventually(() => endpointsOf(redis, "web"), same(["10.0.0.1"]), 20_000);
    expect((await fetch(`http://127.0.0.1:${live.healthPort}/readyz`)).status).toBe(200);
  });

  it("converges after every watch connection is killed", async () => {
    await begin();
    kube.apply(service("web"));
    kube.apply(slice("web", ["10.0.0.1"]));
    await eventually(() => endpointsOf(redis, "web"), same(["10.0.0.1"]));
    kube.dropAllWatches();
    kube.apply(slice("web", ["10.0.0.1", "10.0.0.5"]));
    await eventually(() => endpointsOf(redis, "web"), same(["10.0.0.1", "10.0.0.5"]), 20_000);
  });

  it("re-pushes the full state after Redis restarts empty", async () => {
    privateRedis = await startPrivateRedis();
    const sync = await begin({}, privateRedis.url);
    kube.apply(service("web"));
    kube.apply(slice("web", ["10.0.0.1"]));
    kube.apply(service("api"));
    kube.apply(slice("api", ["10.0.1.1"]));
    const direct = new Redis(privateRedis.url, { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
    direct.on("error", () => {});
    try {
      await eventually(() => endpointsOf(direct, "api"), same(["10.0.1.1"]));
      await privateRedis.stop();
      kube.apply(slice("web", ["10.0.0.1", "10.0.0.2"]));
      await privateRedis.start();
      await eventually(
        () => endpointsOf(direct, "web").catch(() => null),
        same(["10.0.0.1", "10.0.0.2"]),
        20_000,
      );
      await eventually(() => endpointsOf(direct, "api").catch(() => null), same(["10.0.1.1"]), 20_000);
      expect(sync.metrics.get("writeErrors") + sync.metrics.get("fullResyncs")).toBeGreaterThan(1);
    } finally {
      direct.disconnect();
    }
  });

  /**
   * `count` exposed Services published to a private Redis watched by MONITOR; `loseData` empties it, then the
   * test waits until every Service and the heartbeat are back and returns the Services written after the
   * FLUSHALL and before the first heartbeat.
   */
  const repushAfterDataLoss = async (
    count: number,
    env: Record<string, string>,
    loseData: (direct: Redis) => Promise<void>,
  ) => {
    privateRedis = await startPrivateRedis();
    const sync = await begin({ ...env, LEASE_MS: "60000" }, privateRedis.url);
    for (let index = 0; index < count; index++) {
      kube.apply(service(`svc-${index}`));
      kube.apply(slice(`svc-${index}`, ["10.0.0.1"]));
    }
    const keys = clusterKeys(prefix, "east");
    const direct = new Redis(privateRedis.url);
    const monitor = await startRedisMonitor(privateRedis.url);
    try {
      await eventually(
        () => direct.hlen(keys.services),
        (stored) => stored === count,
      );
      await loseData(direct);
      await eventually(
        async () =>
          (await direct.hlen(keys.services)) === count && (await direct.exists(keys.heartbeat)) === 1,
        Boolean,
      );
      const log = monitor.commands;
      const afterFlush = log.slice(log.findLastIndex(([command]) => command === "flushall"));
      // The first SET that can create the record (a SET ... XX on a missing key writes nothing).
      const firstBeat = afterFlush.findIndex(
        (args) =>
          args[0] === "set" && args[1] === keys.heartbeat && !args.some((arg) => arg.toUpperCase() === "XX"),
      );
      expect(firstBeat).toBeGreaterThan(0);
      const repushedBeforeBeat = new Set(
        afterFlush
          .slice(0, firstBeat)
          .filter(([command, key]) => command === "hset" && key === keys.services)
          .map(([, , field]) => field),
      );
      return { sync, repushedBeforeBeat };
    } finally {
      monitor.close();
      direct.disconnect();
    }
  };

  it("brings the heartbeat back only after every Service is re-pushed when Redis lost its data", async () => {
    // A beat every 2 ms: any beat the sync lets out during the re-push lands between two Service writes.
    const { sync, repushedBeforeBeat } = await repushAfterDataLoss(
      150,
      { HEARTBEAT_MS: "2" },
      async (direct) => {
        // Data loss as after a restart without persistence: cut the sync's connection, then empty Redis
        // before its first reconnect attempt (ioredis waits its retry delay). The monitor stays attached.
        const ownId = await direct.client("ID");
        for (const line of String(await direct.client("LIST"))
          .trim()
          .split("\n")) {
          const id = /\bid=(\d+)/.exec(line)?.[1];
          const monitoring = /\bflags=\S*O/.test(line);
          if (id && Number(id) !== ownId && !monitoring) await direct.client("KILL", "ID", id);
        }
        await direct.flushall();
      },
    );
    expect(repushedBeforeBeat.size).toBe(150);
    expect(sync.metrics.get("fullResyncs")).toBeGreaterThan(1);
  });

  it("notices a FLUSHALL without any reconnect and re-pushes every Service before beating again", async () => {
    const { sync, repushedBeforeBeat } = await repushAfterDataLoss(
      60,
      { HEARTBEAT_MS: "50" },
      async (direct) => {
        await direct.flushall();
      },
    );
    expect(repushedBeforeBeat.size).toBe(60);
    expect(sync.metrics.get("storeLosses")).toBe(1);
  });

  it("registers the cluster as soon as Redis answers when Redis was down at the first heartbeat", async () => {
    privateRedis = await startPrivateRedis();
    await privateRedis.stop();
    // The default heartbeat period (LEASE_MS / 3 = 20 s): registration must not wait for the next beat.
    const sync = await begin({ HEARTBEAT_MS: "0", LEASE_MS: "60000" }, privateRedis.url);
    kube.apply(service("web"));
    kube.apply(slice("web", ["10.0.0.1"]));
    await eventually(async () => sync.publishing(), Boolean);
    expect(sync.metrics.get("heartbeatErrors")).toBeGreaterThan(0);
    await privateRedis.start();
    const direct = new Redis(privateRedis.url, { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
    direct.on("error", () => {});
    try {
      const keys = clusterKeys(prefix, "east");
      await eventually(() => endpointsOf(direct, "web").catch(() => null), same(["10.0.0.1"]));
      await eventually(
        () => direct.exists(keys.heartbeat, keys.lease).catch(() => 0),
        (found) => found === 2,
      );
    } finally {
      direct.disconnect();
    }
  });

  it("holds a mass removal, then publishes it once it persisted", async () => {
    const sync = await begin({ VALVE_HOLD_MS: "1500" });
    kube.apply(service("web"));
    kube.apply(slice("web", ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]));
    await eventually(
      () => endpointsOf(redis, "web"),
      (ips) => ips?.length === 4,
    );
    kube.apply(slice("web", []));
    await eventually(
      async () => sync.metrics.get("valveHolds"),
      (holds) => holds === 1,
    );
    expect(await endpointsOf(redis, "web")).toHaveLength(4);
    await eventually(() => endpointsOf(redis, "web"), same([]), 10_000);
  });

  it("logs and skips a malformed annotation and slice while other Services still update", async () => {
    await begin();
    kube.apply(service("web"));
    kube.apply(slice("web", ["10.0.0.1"]));
    kube.apply(service("api"));
    kube.apply(slice("api", ["10.0.1.1"]));
    await eventually(() => endpointsOf(redis, "api"), same(["10.0.1.1"]));
    await eventually(() => endpointsOf(redis, "web"), same(["10.0.0.1"]));

    kube.apply(service("web", { "edgeslice.io/hosts": "bad host!" }));
    kube.apply({ ...slice("api", ["10.0.1.9"], "broken"), endpoints: "not-a-list" });
    kube.apply(slice("api", ["10.0.1.1", "10.0.1.2"]));
    await eventually(() => endpointsOf(redis, "api"), same(["10.0.1.1", "10.0.1.2"]));
    expect(await endpointsOf(redis, "web")).toEqual(["10.0.0.1"]);
  });
});
