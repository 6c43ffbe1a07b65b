import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { clusterKeys, clustersKey } from "../../store/keys.js";
import { published } from "../control-plane/support/store.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { errorLines, ROOT, runSync } from "./run-sync-cli.js";

const EXAMPLES = join(ROOT, "examples");

describe("sync --retire: a cluster's documented way out of the store", () => {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = uniquePrefix("retire");
  const env = (cluster: string) => ({ CLUSTER_NAME: cluster, REDIS_URL, EDGESLICE_PREFIX: prefix });
  afterEach(() => deleteKeysWithPrefix(redis, prefix));
  afterAll(() => redis.disconnect());

  it("removes a cluster whose syncs are gone: records, heartbeat and registry entry, and leaves the others", async () => {
    expect((await runSync(["--from", EXAMPLES, "--once"], env("gone"))).code).toBe(0);
    expect((await runSync(["--from", EXAMPLES, "--once"], env("kept"))).code).toBe(0);
    expect((await published(redis, prefix, "gone")).services.size).toBeGreaterThan(0);

    const run = await runSync(["--retire"], env("gone"));

    expect(run.code).toBe(0);
    const gone = await published(redis, prefix, "gone");
    expect({ registered: gone.registered, services: gone.services.size, routes: gone.routes.size }).toEqual({
      registered: false,
      services: 0,
      routes: 0,
    });
    expect(await redis.keys(`${clusterKeys(prefix, "gone").services.replace(/:services$/, "")}*`)).toEqual(
      [],
    );
    expect(await redis.smembers(clustersKey(prefix))).toEqual(["kept"]);
    expect((await published(redis, prefix, "kept")).services.size).toBeGreaterThan(0);
  }, 90_000);

  it("removes nothing while a sync of that name holds the writer fence, and names it in one error line, exit 1", async () => {
    expect((await runSync(["--from", EXAMPLES, "--once"], env("live"))).code).toBe(0);
    // A live sync renews the fence with every beat.
    await redis.set(clusterKeys(prefix, "live").writer, "sync-live-0", "PX", 30_000);

    const run = await runSync(["--retire"], env("live"));

    expect(run.code).toBe(1);
    expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
      expect.stringMatching(
        /^a sync still writes cluster live \(writer fence held by sync-live-0\): nothing removed/,
      ),
    ]);
    const live = await published(redis, prefix, "live");
    expect(live.registered).toBe(true);
    expect(live.services.size).toBeGreaterThan(0);
    expect(await redis.get(clusterKeys(prefix, "live").writer)).toBe("sync-live-0");
  }, 90_000);
});
