import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterKeys } from "../../store/keys.js";
import { published } from "../control-plane/support/store.js";
import { eventually } from "../support/eventually.js";
import { type PrivateRedis, startPrivateRedis, uniquePrefix } from "../support/redis.js";
import { ROOT } from "./run-sync-cli.js";

const CLUSTER = "folder";

/**
 * A long-running `sync --from DIR` over a Redis that loses its data: as a live sync, it publishes the folder
 * again (one publish loop for both sources), not a heartbeat for a cluster with no records.
 */
describe("sync --from DIR when Redis loses its data", () => {
  let redisServer: PrivateRedis;
  let redis: Redis;
  let sync: ChildProcess;
  const prefix = uniquePrefix("folder-loss");
  const services = async () => [...(await published(redis, prefix, CLUSTER)).services.keys()].sort();
  let expected: string[] = [];

  beforeAll(async () => {
    redisServer = await startPrivateRedis();
    redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
    redis.on("error", () => {});
    sync = spawn(process.execPath, ["--import", "tsx", "sync/main.ts", "--from", join(ROOT, "examples")], {
      cwd: ROOT,
      env: {
        ...process.env,
        CLUSTER_NAME: CLUSTER,
        REDIS_URL: redisServer.url,
        EDGESLICE_PREFIX: prefix,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    sync.stderr?.resume();
    await eventually(
      async () => (await published(redis, prefix, CLUSTER)).registered,
      20_000,
      "the folder published",
    );
    expected = await services();
    // Each beat says how many Service records the sync holds, for routers to compare with what they read.
    await eventually(
      async () => {
        const beat = await redis.get(clusterKeys(prefix, CLUSTER).heartbeat);
        return beat !== null && (JSON.parse(beat) as { services?: number }).services === expected.length;
      },
      10_000,
      "a beat naming the Services held",
    );
  }, 40_000);
  afterAll(async () => {
    sync?.kill("SIGKILL");
    redis?.disconnect();
    await redisServer?.stop();
  });

  it("publishes the folder again after Redis restarted empty, before routers see its heartbeat", async () => {
    await redisServer.stop();
    await redisServer.start();
    await eventually(
      async () => (await published(redis, prefix, CLUSTER)).registered,
      10_000,
      "the heartbeat back",
    );
    expect(await services()).toEqual(expected);
  }, 20_000);

  it("publishes the folder again after its keys were flushed without a reconnect", async () => {
    await redis.flushall();
    await eventually(
      async () => (await published(redis, prefix, CLUSTER)).registered,
      10_000,
      "the heartbeat back",
    );
    expect(await services()).toEqual(expected);
  }, 20_000);
});
