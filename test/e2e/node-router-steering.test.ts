import { Redis } from "ioredis";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DelayedCluster,
  publishClusters,
  ROUTER_NEAR_FRANKFURT,
  type SteeredService,
  startDelayedCluster,
  THREE_CLUSTERS,
} from "../../bench/steering/delayed-clusters.js";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { silentLogger } from "../../lib/logger.js";
import { binomialBound } from "../functions/statistics.js";
import { eventually } from "../support/eventually.js";
import { deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../support/redis.js";

/**
 * Three clusters in the real Redis, fra, iad and pdx, each a backend on 127.0.0.1 that answers after 5, 20 and
 * 80 ms, and the Node router next to Frankfurt (ROUTER_LOCATION). One Service per policy, every cluster
 * annotating it alike.
 */
const prefix = uniquePrefix("e2e-steering");
const ADMIN_TOKEN = "steering-admin";
const SERVICES: SteeredService[] = [
  { service: "shop/latency", host: "latency.test", steering: { policy: "latency" } },
  { service: "shop/nearest", host: "nearest.test", steering: { policy: "proximity" } },
  {
    service: "shop/migrating",
    host: "migrating.test",
    steering: {
      policy: "weighted",
      weights: [
        { cluster: "fra", weight: 90 },
        { cluster: "iad", weight: 10 },
      ],
    },
  },
  { service: "shop/failing", host: "failing.test", steering: { policy: "proximity" } },
];

let redis: Redis;
let clusters: DelayedCluster[];
let router: NodeRouter;
let pool: Pool;

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  clusters = await Promise.all(THREE_CLUSTERS.map(startDelayedCluster));
  await publishClusters(redis, prefix, clusters, SERVICES);
  router = await startNodeRouter(
    parseRouterConfig({
      REDIS_URL,
      PORT: "0",
      EDGESLICE_PREFIX: prefix,
      ADMIN_TOKEN,
      ROUTER_LOCATION: ROUTER_NEAR_FRANKFURT,
    }),
    { host: "127.0.0.1", logger: silentLogger, refreshIntervalMs: 100, drainMs: 500 },
  );
  pool = new Pool(router.url, { connections: 8 });
  await eventually(
    async () => (await answer("nearest.test")).status === 200,
    10_000,
    "the router loaded the clusters",
  );
});

afterAll(async () => {
  await pool?.close();
  await router?.close();
  await Promise.all((clusters ?? []).map((cluster) => cluster.close()));
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
});

async function answer(host: string): Promise<{ status: number; cluster: string }> {
  const response = await pool.request({ method: "GET", path: "/", headers: { host } });
  await response.body.text();
  const backend = response.headers["x-backend"];
  return { status: response.statusCode, cluster: typeof backend === "string" ? backend : "" };
}

/** How many of `count` requests each cluster answered, `concurrency` at a time. */
async function shares(host: string, count: number, concurrency = 8): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let left = count;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const { cluster } = await answer(host);
        counts.set(cluster, (counts.get(cluster) ?? 0) + 1);
      }
    }),
  );
  return counts;
}

/** The admin endpoints' origin: the ADMIN_PORT listener where the router has one, else its one listener. */
const adminOrigin = () => {
  const listeners: { readonly url: string; readonly adminUrl?: string } = router;
  return listeners.adminUrl ?? listeners.url;
};

async function explain(host: string) {
  const response = await fetch(`${adminOrigin()}/_edgeslice/explain?host=${host}&path=/`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return (await response.json()) as {
    steering?: {
      chosen: string;
      reason: string;
      clusters: { cluster: string; state: string; ewmaMs: number | null }[];
    };
  };
}

describe("steering across three loopback clusters (Node router, real Redis)", () => {
  it("sends a proximity Service to the cluster nearest the router", async () => {
    expect(await shares("nearest.test", 40)).toEqual(new Map([["fra", 40]]));
    expect((await explain("nearest.test")).steering).toMatchObject({ chosen: "fra", reason: "nearest" });
  });

  it("moves a latency Service to the fastest cluster once it has measured them, probing the others now and then", async () => {
    // Two at a time: the test's own queueing would add to every cluster's time to head alike and blur the gaps
    // the policy measures (on a loaded 2-core machine eight at a time did).
    await shares("latency.test", 300, 2);
    const counts = await shares("latency.test", 400, 2);
    // The fastest cluster takes all but the probe share (5 %): n·0.95 less an exact binomial bound.
    const n = 400;
    const bound = binomialBound(n, 0.95, 1e-6);
    expect(counts.get("fra") ?? 0).toBeGreaterThan(n * 0.95 - bound);
    const steering = (await explain("latency.test")).steering;
    const ewma = (name: string) => steering?.clusters.find((c) => c.cluster === name)?.ewmaMs ?? Number.NaN;
    expect(ewma("fra")).toBeLessThan(ewma("iad"));
    expect(ewma("iad")).toBeLessThan(ewma("pdx"));
  });

  it("splits a weighted Service 90/10 within an exact binomial bound, and sends the unlisted cluster nothing", async () => {
    const n = 600;
    const counts = await shares("migrating.test", n);
    const bound = binomialBound(n, 0.9, 1e-6);
    expect(Math.abs((counts.get("fra") ?? 0) - n * 0.9)).toBeLessThan(bound);
    expect(counts.get("pdx")).toBeUndefined();
  });

  it("steps over a cluster that starts failing under traffic, and takes it back once it answers again", async () => {
    const fra = clusters.find((cluster) => cluster.name === "fra");
    if (!fra) throw new Error("no fra");
    expect((await answer("failing.test")).cluster).toBe("fra");
    fra.failing = true;
    try {
      // Sequential requests: each failure the clients see is one the health check needed.
      const seen: { status: number; cluster: string }[] = [];
      await eventually(
        async () => {
          seen.push(await answer("failing.test"));
          return (
            seen.slice(-20).length === 20 &&
            seen.slice(-20).every((a) => a.status === 200 && a.cluster === "iad")
          );
        },
        10_000,
        () => `traffic left fra: ${JSON.stringify(seen.slice(-5))}`,
      );
      const failures = seen.filter((a) => a.status !== 200);
      // Five failed attempts in a row step a cluster over: no more than five requests saw fra fail.
      expect(failures.length).toBeGreaterThan(0);
      expect(failures.length).toBeLessThanOrEqual(5);
      expect(
        (await explain("failing.test")).steering?.clusters.find((c) => c.cluster === "fra")?.state,
      ).not.toBe("healthy");
      // The other Services share fra's health: the nearest one fails over too.
      expect((await answer("nearest.test")).cluster).toBe("iad");
    } finally {
      fra.failing = false;
    }
    // After the step-over, probes (5 % of requests) find fra healthy again and the traffic comes back.
    await eventually(
      async () => {
        const batch = await shares("failing.test", 20, 4);
        return batch.get("fra") === 20;
      },
      20_000,
      "fra took its traffic back",
    );
  });

  it("retries in the next cluster when the nearest refuses connections, so clients see no error while it is stepped over", async () => {
    const fra = clusters.find((cluster) => cluster.name === "fra");
    if (!fra) throw new Error("no fra");
    await fra.close();
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await answer("nearest.test"));
    expect(answers.every((a) => a.status === 200 && a.cluster === "iad")).toBe(true);
    expect((await explain("nearest.test")).steering).toMatchObject({ chosen: "iad", reason: "failover" });
  });
});
