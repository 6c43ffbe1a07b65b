import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { clusterKeys } from "../../store/keys.js";
import type { LiveSync } from "../../sync/live.js";
import { exposedServiceObject, sliceObject } from "../fake-kube/fixtures.js";
import { startLiveOn, storedIps } from "../fake-kube/live-sync.js";
import { type FakeKube, startFakeKube } from "../fake-kube/server.js";
import { eventually } from "../support/eventually.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";

const service = exposedServiceObject("shop", "web", "web.example.com");
const slice = (ips: string[]) => sliceObject("shop", "web-a", "web", ips);

describe("two sync replicas electing a leader through a coordination.k8s.io Lease", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("leader");
  let kube: FakeKube | undefined;
  const replicas: LiveSync[] = [];

  afterEach(async () => {
    await Promise.all(replicas.splice(0).map((replica) => replica.stop()));
    await kube?.close();
    await deleteKeysWithPrefix(redis, prefix);
  });
  afterAll(() => redis.disconnect());

  const startReplica = (name: string, fake: FakeKube) =>
    startLiveOn(fake, {
      CLUSTER_NAME: "east",
      REDIS_URL,
      EDGESLICE_PREFIX: prefix,
      LEADER_ELECTION: "true",
      LEADER_LEASE_MS: "3000",
      LEASE_NAMESPACE: "edgeslice",
      DEBOUNCE_MS: "20",
      HEARTBEAT_MS: "200",
      POD_NAME: name,
    });

  const storedEndpoints = async () =>
    (await storedIps(redis, { prefix, cluster: "east" }, "shop/web"))?.join();
  const until = (condition: () => boolean | Promise<boolean>, what: string) =>
    eventually(condition, 10_000, what);

  it("lets only the leader write, and hands over to the other replica when the leader stops", async () => {
    const fake = await startFakeKube();
    kube = fake;
    fake.apply(service);
    fake.apply(slice(["10.0.0.1"]));
    const a = await startReplica("sync-a", fake);
    const b = await startReplica("sync-b", fake);
    replicas.push(a, b);

    await until(() => a.publishing() !== b.publishing(), "exactly one replica publishes");
    const [leader, follower] = a.publishing() ? [a, b] : [b, a];
    await until(async () => (await storedEndpoints()) === "10.0.0.1", "the first endpoints are stored");
    fake.apply(slice(["10.0.0.1", "10.0.0.2"]));
    await until(async () => (await storedEndpoints()) === "10.0.0.1,10.0.0.2", "the change is stored");
    expect(follower.publishing()).toBe(false);
    expect(follower.metrics.get("writes")).toBe(0);
    await until(() => leader.metrics.get("writes") > 0, "the leader counts its writes");
    const leaderName = leader === a ? "sync-a" : "sync-b";
    const leaseHolder = () => redis.get(clusterKeys(prefix, "east").lease);
    await until(async () => (await leaseHolder()) === leaderName, "the leader holds the store lease");

    replicas.splice(replicas.indexOf(leader), 1);
    await leader.stop();
    await until(() => follower.publishing(), "the follower takes over");
    fake.apply(slice(["10.0.0.3"]));
    await until(async () => (await storedEndpoints()) === "10.0.0.3", "the new leader stores a change");
    // The sync counts a write once Redis's reply reaches it, which may be after this test's own read saw it.
    await until(() => follower.metrics.get("writes") > 0, "the new leader counts its write");
    const followerName = leaderName === "sync-a" ? "sync-b" : "sync-a";
    await until(async () => (await leaseHolder()) === followerName, "the new leader holds the store lease");
  });
});
