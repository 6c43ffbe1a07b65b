import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../lib/logger.js";
import { clusterKeys } from "../../store/keys.js";
import { decodeServiceRecord } from "../../store/records.js";
import { parseSyncConfig } from "../../sync/config.js";
import { type LiveSync, startLive } from "../../sync/live.js";
import { type FakeKube, startFakeKube } from "../fake-kube/server.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";

const service = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace: "shop", annotations: { "edgeslice.io/hosts": "web.example.com" } },
  spec: { ports: [{ name: "http", port: 80, protocol: "TCP" }] },
};

function slice(ips: string[]) {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "web-a", namespace: "shop", labels: { "kubernetes.io/service-name": "web" } },
    addressType: "IPv4",
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
  };
}

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

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
    startLive(
      parseSyncConfig({
        CLUSTER_NAME: "east",
        REDIS_URL,
        EDGESLICE_PREFIX: prefix,
        SYNC_PORT: "0",
        SYNC_HOST: "127.0.0.1",
        LEADER_ELECTION: "true",
        LEADER_LEASE_MS: "3000",
        LEASE_NAMESPACE: "edgeslice",
        DEBOUNCE_MS: "20",
        HEARTBEAT_MS: "200",
        POD_NAME: name,
      }),
      { logger: silentLogger, kubeConfig: fake.kubeConfig() },
    );

  const storedEndpoints = async () => {
    const raw = await redis.hget(clusterKeys(prefix, "east").services, "shop/web");
    const decoded = raw === null ? undefined : decodeServiceRecord(raw);
    return decoded?.ok ? decoded.value.ipv4.endpoints.map((endpoint) => endpoint.ip) : [];
  };

  it("lets only the leader write, and hands over to the other replica when the leader stops", async () => {
    const fake = await startFakeKube();
    kube = fake;
    fake.apply(service);
    fake.apply(slice(["10.0.0.1"]));
    const a = await startReplica("sync-a", fake);
    const b = await startReplica("sync-b", fake);
    replicas.push(a, b);

    await eventually(() => a.publishing() !== b.publishing());
    const [leader, follower] = a.publishing() ? [a, b] : [b, a];
    await eventually(async () => (await storedEndpoints()).join() === "10.0.0.1");
    fake.apply(slice(["10.0.0.1", "10.0.0.2"]));
    await eventually(async () => (await storedEndpoints()).join() === "10.0.0.1,10.0.0.2");
    expect(follower.publishing()).toBe(false);
    expect(follower.metrics.get("writes")).toBe(0);
    expect(leader.metrics.get("writes")).toBeGreaterThan(0);
    const leaderName = leader === a ? "sync-a" : "sync-b";
    const leaseHolder = () => redis.get(clusterKeys(prefix, "east").lease);
    await eventually(async () => (await leaseHolder()) === leaderName);

    replicas.splice(replicas.indexOf(leader), 1);
    await leader.stop();
    await eventually(() => follower.publishing());
    fake.apply(slice(["10.0.0.3"]));
    await eventually(async () => (await storedEndpoints()).join() === "10.0.0.3");
    expect(follower.metrics.get("writes")).toBeGreaterThan(0);
    const followerName = leaderName === "sync-a" ? "sync-b" : "sync-a";
    await eventually(async () => (await leaseHolder()) === followerName);
  });
});
