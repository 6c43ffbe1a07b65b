import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { clusterKeys } from "../../store/keys.js";
import { decodeHeartbeatRecord } from "../../store/records.js";
import type { LiveSync } from "../../sync/live.js";
import { exposedServiceObject, sliceObject } from "../fake-kube/fixtures.js";
import { startLiveOn, storedIps } from "../fake-kube/live-sync.js";
import { type FakeKube, startFakeKube } from "../fake-kube/server.js";
import { eventually } from "../support/eventually.js";
import { type LogEntry, recordingLogger } from "../support/loggers.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";

/** Leases short enough that a 4 s outage outlasts each several times over (config.ts accepts them). */
const SHORT_LEASES = { LEASE_MS: "3000", HEARTBEAT_MS: "400", LEADER_LEASE_MS: "1000" };

describe("two replicas through an API server outage (the fake API server, as kube-apiserver behaves)", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("outage");
  const keys = clusterKeys(prefix, "east");
  let kube: FakeKube | undefined;
  const replicas: LiveSync[] = [];
  afterEach(async () => {
    await Promise.all(replicas.splice(0).map((replica) => replica.stop()));
    await kube?.close();
    await deleteKeysWithPrefix(redis, prefix);
  });
  afterAll(() => redis.disconnect());

  const slice = (ips: string[]) => sliceObject("shop", "web-a", "web", ips);
  const stored = async () => (await storedIps(redis, { prefix, cluster: "east" }, "shop/web"))?.join();

  it("keeps one replica publishing the last state, then catches up within seconds though the old watches hang on", async () => {
    const fake = await startFakeKube();
    kube = fake;
    fake.apply(exposedServiceObject("shop", "web", "web.example.com"));
    fake.apply(slice(["10.0.0.1"]));
    const logs: LogEntry[] = [];
    const start = async (name: string) => {
      const { logger, entries } = recordingLogger();
      const replica = await startLiveOn(
        fake,
        {
          CLUSTER_NAME: "east",
          REDIS_URL,
          EDGESLICE_PREFIX: prefix,
          LEADER_ELECTION: "true",
          POD_NAME: name,
          ...SHORT_LEASES,
        },
        logger,
      );
      replicas.push(replica);
      return { replica, entries };
    };
    const a = await start("sync-a");
    const b = await start("sync-b");
    await eventually(async () => (await stored()) === "10.0.0.1", 10_000, "the first state is stored");

    const samples: { lease: string | null; publishing: number }[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const publishing = [a, b].filter(({ replica }) => replica.publishing()).length;
        samples.push({ lease: await redis.get(keys.lease), publishing });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();

    // As kube-apiserver on SIGTERM: new connections refused, open watches held silent (here past the restart).
    await fake.stop({ holdWatchesMs: 30_000 });
    fake.apply(slice(["10.0.0.1", "10.0.0.2"]));
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const during = decodeHeartbeatRecord((await redis.get(keys.heartbeat)) ?? "");
    await fake.restart({ forbiddenForMs: 500 });
    const restartedAt = Date.now();
    await eventually(async () => (await stored()) === "10.0.0.1,10.0.0.2", 10_000, "the change is stored");
    const catchUpMs = Date.now() - restartedAt;
    sampling = false;
    await sampler;
    logs.push(...a.entries, ...b.entries);

    expect(samples.filter((sample) => sample.lease === null)).toEqual([]);
    // Never two; after the outage the Lease may go to the other replica, which then waits for the fence.
    expect(samples.filter((sample) => sample.publishing > 1)).toEqual([]);
    expect(during).toMatchObject({ ok: true, value: { apiserverUnreachableSince: expect.any(Number) } });
    // Watches left hanging would wait for their timeout (minutes); resumed ones catch up within seconds.
    expect(catchUpMs).toBeLessThan(5_000);
    expect(logs.filter((entry) => entry.level === "error")).toEqual([]);
    const publisher = a.replica.publishing() ? a.replica : b.replica;
    expect(publisher.reachability.unreachableSince).toBeUndefined();
    expect(publisher.metrics.render()).toContain(`edgeslice_sync_apiserver_reachable{cluster="east"} 1`);
  });
});
