import { Redis } from "ioredis";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { silentLogger } from "../../lib/logger.js";
import { clusterKeys } from "../../store/keys.js";
import { eventually } from "../support/eventually.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";
import { createEchoFleet, type EchoFleet } from "./support/echo-backends.js";
import { hostClient } from "./support/host-client.js";
import { type KubeCluster, startKubeCluster } from "./support/kube-cluster.js";
import { EDGE_GATEWAY, manifestObjects, serviceManifests } from "./support/route-manifests.js";
import { type ConditionSummary, untilRouteConditions } from "./support/route-status.js";

/**
 * A canary rollout across two clusters, every part real but the API servers (fake): the same Gateway and
 * HTTPRoute (3:1 between shop/main and shop/next) applied to east and west, shop/main in both, shop/next
 * deployed to east only. Each live sync publishes its cluster's copy of the route; the Node router merges
 * them and serves each backend from every cluster that has it.
 */
const GATEWAY = `${EDGE_GATEWAY}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: rollout, namespace: shop }
spec:
  parentRefs: [{ name: edge }]
  hostnames: [rollout.gw.test]
  rules:
    - backendRefs: [{ name: main, port: 80, weight: 3 }, { name: next, port: 80, weight: 1 }]
`;
const prefix = uniquePrefix("e2e-rollout");
const fleet: EchoFleet = createEchoFleet();
let redis: Redis;
let east: KubeCluster;
let west: KubeCluster;
let router: NodeRouter;
let client: Pool;
let http: ReturnType<typeof hostClient>;

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const backends = await fleet.start(["main-east", "main-west", "next-east"]);
  const port = (name: string) => backends.get(name)?.port ?? 0;
  [east, west] = await Promise.all([
    startKubeCluster({ name: "east", prefix, redisUrl: REDIS_URL }),
    startKubeCluster({ name: "west", prefix, redisUrl: REDIS_URL }),
  ]);
  const apply = (cluster: KubeCluster, text: string) => {
    for (const object of manifestObjects(text)) cluster.kube.apply(object);
  };
  apply(east, `${GATEWAY}---\n${serviceManifests("shop", "main", port("main-east"))}`);
  apply(east, serviceManifests("shop", "next", port("next-east")));
  apply(west, `${GATEWAY}---\n${serviceManifests("shop", "main", port("main-west"))}`);
  const config = parseRouterConfig({ REDIS_URL, PORT: "0", EDGESLICE_PREFIX: prefix, LOG_LEVEL: "error" });
  router = await startNodeRouter(config, { host: "127.0.0.1", logger: silentLogger, refreshIntervalMs: 100 });
  client = new Pool(router.url, { connections: 8 });
  http = hostClient(client, "");
  await http.untilProxied("rollout.gw.test", "/");
}, 20_000);

afterAll(async () => {
  await client?.destroy();
  await router?.close();
  await Promise.all([east?.stop(), west?.stop()]);
  await fleet.closeAll();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
});

/** Who answered `n` requests (a backend's name, or the router's status), until exactly `expected` did. */
async function answersUntil(expected: readonly string[], n = 200): Promise<Set<string>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) seen.add(await http.who("rollout.gw.test", "/"));
    const exactly = seen.size === expected.length && expected.every((name) => seen.has(name));
    if (exactly || Date.now() > deadline) return seen;
  }
}

const resolvedRefs = (cluster: KubeCluster, reason: string) =>
  untilRouteConditions(cluster.kube, { namespace: "shop", name: "rollout" }, (found) =>
    found.some((item) => item.type === "ResolvedRefs" && item.reason === reason),
  ).then((found: ConditionSummary[]) => found.find((item) => item.type === "ResolvedRefs"));

describe("a canary Service deployed to one of two clusters", () => {
  it("publishes the same route record in both clusters, each with its own ResolvedRefs", async () => {
    const routeKey = (cluster: string) => clusterKeys(prefix, cluster).routes;
    // The router answered as soon as one cluster's copy was in: each cluster's sync writes its own.
    const bothWritten = async () =>
      (await redis.hexists(routeKey("east"), "httproute:shop/rollout")) === 1 &&
      (await redis.hexists(routeKey("west"), "httproute:shop/rollout")) === 1;
    await eventually(bothWritten, 10_000, "both clusters wrote the route record");
    const copy = async (cluster: string) =>
      JSON.parse((await redis.hget(routeKey(cluster), "httproute:shop/rollout")) ?? "{}");
    const [eastCopy, westCopy] = await Promise.all([copy("east"), copy("west")]);
    expect({ ...westCopy, createdAt: 0 }).toEqual({ ...eastCopy, createdAt: 0 });
    expect(westCopy.rules[0].backends).toEqual([
      { service: "shop/main", port: 80, weight: 3 },
      { service: "shop/next", port: 80, weight: 1 },
    ]);
    expect(await resolvedRefs(east, "ResolvedRefs")).toMatchObject({ status: "True" });
    expect(await resolvedRefs(west, "BackendNotFound")).toMatchObject({ status: "False" });
  });

  it("sends the canary share to east's canary and the rest to both clusters' main backends", async () => {
    const seen = await answersUntil(["main-east", "main-west", "next-east"]);
    expect([...seen].sort()).toEqual(["main-east", "main-west", "next-east"]);
  });

  it("answers the canary share 500 once no cluster has the canary Service, the rest still served", async () => {
    // Its EndpointSlice stays (the fake API server collects no garbage): only the Service is gone.
    east.kube.remove("Service", "shop", "next");
    const seen = await answersUntil(["main-east", "main-west", "500"]);
    expect([...seen].sort()).toEqual(["500", "main-east", "main-west"]);
    expect(await redis.hexists(clusterKeys(prefix, "east").services, "shop/next")).toBe(0);
  });
});
