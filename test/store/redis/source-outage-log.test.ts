import { Redis } from "ioredis";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRedisSnapshotSource } from "../../../store/redis/source.js";
import { recordingLogger } from "../../support/loggers.js";
import { freePort } from "../../support/redis.js";
import { until } from "./source-support.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the Redis source while Redis is down before its first load", () => {
  it("says the first load failed once, and adds no line for each refresh that fails after it", async () => {
    const port = await freePort();
    const redis = new Redis(`redis://127.0.0.1:${port}`, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 50,
    });
    redis.on("error", () => {});
    cleanups.push(() => redis.disconnect());
    // Every load, the first and each refresh while no snapshot exists, starts by reading the run id.
    const loads = vi.spyOn(redis, "info");
    const { logger, entries } = recordingLogger();
    const source = createRedisSnapshotSource({
      redis,
      prefix: "edgeslice-outage",
      logger,
      now: Date.now,
      refreshIntervalMs: 10,
    });
    cleanups.push(() => source.close());

    await source.start();
    await until(() => loads.mock.calls.length >= 5, "four refreshes after the first load");

    expect(source.current()).toBeUndefined();
    const said = entries.map(({ message }) => message);
    expect(
      said.filter((message) => message === "initial store load failed; retrying in the background"),
    ).toHaveLength(1);
    expect(said).not.toContain("store refresh failed; serving the last snapshot");
  });
});
