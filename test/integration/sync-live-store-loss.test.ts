import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { clusterKeys } from "../../store/keys.js";
import { eventually } from "../support/eventually.js";
import { startRedisMonitor } from "../support/redis-monitor.js";
import { liveWorld, shopService, shopSlice } from "./support/live-harness.js";

/** A client of a Redis that the test restarts: it keeps retrying, and its errors are expected. */
function reconnectingClient(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
  client.on("error", () => {});
  return client;
}

describe("live sync against the fake API server and real Redis", () => {
  const w = liveWorld();

  it("re-pushes the full state after Redis restarts empty", async () => {
    const privateRedis = await w.privateRedis();
    const sync = await w.begin({ redisUrl: privateRedis.url });
    w.kube.apply(shopService("web"));
    w.kube.apply(shopSlice("web", ["10.0.0.1"]));
    w.kube.apply(shopService("api"));
    w.kube.apply(shopSlice("api", ["10.0.1.1"]));
    const direct = reconnectingClient(privateRedis.url);
    try {
      await w.endpointsBecome(direct, "api", ["10.0.1.1"]);
      await privateRedis.stop();
      w.kube.apply(shopSlice("web", ["10.0.0.1", "10.0.0.2"]));
      await privateRedis.start();
      const whileReconnecting = { timeoutMs: 20_000, reconnecting: true };
      await w.endpointsBecome(direct, "web", ["10.0.0.1", "10.0.0.2"], whileReconnecting);
      await w.endpointsBecome(direct, "api", ["10.0.1.1"], whileReconnecting);
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
    const privateRedis = await w.privateRedis();
    const sync = await w.begin({ env: { ...env, LEASE_MS: "60000" }, redisUrl: privateRedis.url });
    for (let index = 0; index < count; index++) {
      w.kube.apply(shopService(`svc-${index}`));
      w.kube.apply(shopSlice(`svc-${index}`, ["10.0.0.1"]));
    }
    const keys = clusterKeys(w.prefix, "east");
    const direct = new Redis(privateRedis.url);
    const monitor = await startRedisMonitor(privateRedis.url);
    try {
      // Stored whole (records and routes) and announced by a first heartbeat: the store loses a cluster
      // routers know.
      await eventually(
        async () =>
          (await direct.hlen(keys.services)) === count &&
          (await direct.hlen(keys.routes)) === count &&
          (await direct.exists(keys.heartbeat)) === 1,
        10_000,
        `all ${count} Services are stored`,
      );
      await loseData(direct);
      const afterFlush = () => {
        const log = monitor.commands;
        return log.slice(log.findLastIndex(([command]) => command === "flushall"));
      };
      // The first SET that can create the record (a SET ... XX on a missing key writes nothing).
      const firstBeatIn = (commands: readonly (readonly string[])[]) =>
        commands.findIndex(
          (args) =>
            args[0] === "set" &&
            args[1] === keys.heartbeat &&
            !args.some((arg) => arg.toUpperCase() === "XX"),
        );
      // MONITOR reports on a socket of its own: wait for its line of the beat too, not only for Redis' state.
      await eventually(
        async () =>
          (await direct.hlen(keys.services)) === count &&
          (await direct.exists(keys.heartbeat)) === 1 &&
          firstBeatIn(afterFlush()) >= 0,
        10_000,
        "every Service and the heartbeat are back",
      );
      const commands = afterFlush();
      const firstBeat = firstBeatIn(commands);
      expect(firstBeat).toBeGreaterThan(0);
      const repushedBeforeBeat = new Set(
        commands
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
    const privateRedis = await w.privateRedis();
    await privateRedis.stop();
    // The default heartbeat period (LEASE_MS / 5 = 12 s): registration must not wait for the next beat.
    const sync = await w.begin({ env: { HEARTBEAT_MS: "0", LEASE_MS: "60000" }, redisUrl: privateRedis.url });
    w.kube.apply(shopService("web"));
    w.kube.apply(shopSlice("web", ["10.0.0.1"]));
    await eventually(() => sync.watch.synced, 10_000, "the sync is synced");
    // Publishing needs the writer fence, which lives in Redis: nothing is written while Redis is down.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sync.publishing()).toBe(false);
    await privateRedis.start();
    const direct = reconnectingClient(privateRedis.url);
    try {
      const keys = clusterKeys(w.prefix, "east");
      await w.endpointsBecome(direct, "web", ["10.0.0.1"], { reconnecting: true });
      await eventually(
        async () => (await direct.exists(keys.heartbeat, keys.lease).catch(() => 0)) === 2,
        10_000,
        "the heartbeat and the lease are written",
      );
    } finally {
      direct.disconnect();
    }
  });
});
