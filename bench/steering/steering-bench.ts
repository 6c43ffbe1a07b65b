import { Redis } from "ioredis";
import { Pool } from "undici";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../functions/node/server.js";
import { silentLogger } from "../../lib/logger.js";
import { startPrivateRedis } from "../../test/support/redis.js";
import { percentile } from "../convergence/changes.js";
import {
  type DelayedCluster,
  publishClusters,
  ROUTER_NEAR_FRANKFURT,
  type SteeredService,
  startDelayedCluster,
  THREE_CLUSTERS,
} from "./delayed-clusters.js";

/**
 * Cross-cluster steering on the Node router (startNodeRouter in this process, reading a private redis-server)
 * over three loopback clusters whose pods answer after 5, 20 and 80 ms (delayed-clusters.ts), the router next
 * to Frankfurt (the 5 ms cluster):
 * - p50 of a latency-steered Service and of the same Service spread at random (local-first without
 *   ROUTER_CLUSTER: every cluster's pods in one tier, picked by power of two choices, which with few requests
 *   in flight is a uniform pick), from one run, next to the fastest cluster's own p50 (its pods asked directly);
 * - failover: a proximity-steered Service whose nearest cluster starts answering 503 under a steady stream of
 *   requests, one after the other: the time from the switch until the answers come from another cluster.
 */
export interface SteeringBenchOptions {
  /** Requests before measuring, so each cluster is measured (latency) and connections are open. */
  readonly warmup: number;
  readonly requests: number;
  readonly concurrency: number;
  readonly failoverTrials: number;
}

export interface SteeringReport {
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly randomP50Ms: number;
  readonly randomP99Ms: number;
  readonly fastestP50Ms: number;
  /** Share of the latency Service's measured requests each cluster answered. */
  readonly latencyShares: Readonly<Record<string, number>>;
  /** Each trial: ms until traffic had moved, and the 503s clients saw meanwhile. */
  readonly failovers: readonly { readonly ms: number; readonly failedRequests: number }[];
  readonly options: SteeringBenchOptions;
}

const SERVICES: SteeredService[] = [
  { service: "bench/latency", host: "latency.bench", steering: { policy: "latency" } },
  { service: "bench/random", host: "random.bench", steering: undefined },
  { service: "bench/nearest", host: "nearest.bench", steering: { policy: "proximity" } },
];

/** Answers in a row from another cluster that count as "traffic has moved". */
export const SETTLED_ANSWERS = 20;

export async function runSteeringBench(
  options: SteeringBenchOptions,
  log: (line: string) => void,
): Promise<SteeringReport> {
  const redisServer = await startPrivateRedis();
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  const clusters = await Promise.all(THREE_CLUSTERS.map(startDelayedCluster));
  let router: NodeRouter | undefined;
  let pool: Pool | undefined;
  try {
    await publishClusters(redis, "bench", clusters, SERVICES);
    router = await startNodeRouter(
      parseRouterConfig({
        REDIS_URL: redisServer.url,
        PORT: "0",
        EDGESLICE_PREFIX: "bench",
        ROUTER_LOCATION: ROUTER_NEAR_FRANKFURT,
        LOG_LEVEL: "error",
      }),
      { host: "127.0.0.1", logger: silentLogger, refreshIntervalMs: 200, drainMs: 500 },
    );
    const client = new Pool(router.url, { connections: options.concurrency });
    pool = client;
    await untilAnswered(client);
    log("steering: latency policy ...");
    await timed(client, "latency.bench", options.warmup, options.concurrency);
    const latency = await timed(client, "latency.bench", options.requests, options.concurrency);
    log("steering: random ...");
    await timed(client, "random.bench", options.warmup, options.concurrency);
    const random = await timed(client, "random.bench", options.requests, options.concurrency);
    log("steering: fastest cluster direct ...");
    const fastest = await fastestDirect(clusters, options.requests, options.concurrency);
    const failovers: SteeringReport["failovers"][number][] = [];
    for (let trial = 0; trial < options.failoverTrials; trial++) {
      log(`steering: failover ${trial + 1}/${options.failoverTrials} ...`);
      failovers.push(await failover(client, clusters));
    }
    const latencyShares: Record<string, number> = {};
    for (const cluster of latency.clusters)
      latencyShares[cluster] = (latencyShares[cluster] ?? 0) + 1 / latency.clusters.length;
    return {
      latencyP50Ms: percentile(latency.sorted, 50),
      latencyP99Ms: percentile(latency.sorted, 99),
      randomP50Ms: percentile(random.sorted, 50),
      randomP99Ms: percentile(random.sorted, 99),
      fastestP50Ms: percentile(fastest, 50),
      latencyShares,
      failovers,
      options,
    };
  } finally {
    await pool?.close();
    await router?.close();
    await Promise.all(clusters.map((cluster) => cluster.close()));
    redis.disconnect();
    await redisServer.stop();
  }
}

async function answer(client: Pool, host: string): Promise<{ status: number; cluster: string }> {
  const response = await client.request({ method: "GET", path: "/", headers: { host } });
  await response.body.text();
  const backend = response.headers["x-backend"];
  return { status: response.statusCode, cluster: typeof backend === "string" ? backend : "" };
}

async function untilAnswered(client: Pool): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await answer(client, "nearest.bench")).status !== 200) {
    if (Date.now() > deadline) throw new Error("the router never loaded the bench's clusters");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `count` requests, `concurrency` at a time: each one's time to its whole answer (sorted) and who answered. */
async function timed(
  client: Pool,
  host: string,
  count: number,
  concurrency: number,
): Promise<{ sorted: number[]; clusters: string[] }> {
  const times: number[] = [];
  const clusters: string[] = [];
  let left = count;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const started = performance.now();
        const { cluster } = await answer(client, host);
        times.push(performance.now() - started);
        clusters.push(cluster);
      }
    }),
  );
  return { sorted: times.sort((a, b) => a - b), clusters };
}

/** The fastest cluster's pods asked directly: the floor the latency policy can reach. */
async function fastestDirect(clusters: readonly DelayedCluster[], count: number, concurrency: number) {
  const fastest = [...clusters].sort((a, b) => a.delayMs - b.delayMs)[0];
  const port = fastest?.ports[0];
  if (port === undefined) throw new Error("no cluster");
  const direct = new Pool(`http://127.0.0.1:${port}`, { connections: concurrency });
  try {
    return (await timed(direct, "direct.bench", count, concurrency)).sorted;
  } finally {
    await direct.close();
  }
}

/**
 * Once the nearest cluster takes every request, it answers 503 from then on; one request after the other until
 * SETTLED_ANSWERS in a row come from another cluster: the time to the first of them. Then it answers again (the
 * next trial waits until its step-over ended and probes found it healthy).
 */
async function failover(
  client: Pool,
  clusters: readonly DelayedCluster[],
): Promise<{ ms: number; failedRequests: number }> {
  const nearest = clusters.find((cluster) => cluster.name === "fra");
  if (!nearest) throw new Error("no fra");
  // Healthy again after an earlier trial: every answer from it, not the probes of a cluster still recovering.
  const back = performance.now();
  for (let inARow = 0; inARow < SETTLED_ANSWERS; ) {
    inARow = (await answer(client, "nearest.bench")).cluster === nearest.name ? inARow + 1 : 0;
    if (performance.now() - back > 120_000)
      throw new Error("the nearest cluster never took its traffic back");
  }
  nearest.failing = true;
  const started = performance.now();
  let failedRequests = 0;
  let movedAt: number | undefined;
  let inARow = 0;
  try {
    while (inARow < SETTLED_ANSWERS) {
      const answeredAt = performance.now();
      const { status, cluster } = await answer(client, "nearest.bench");
      if (status !== 200) failedRequests++;
      if (status === 200 && cluster !== nearest.name) {
        if (inARow === 0) movedAt = answeredAt;
        inARow++;
      } else inARow = 0;
      if (performance.now() - started > 30_000) throw new Error("traffic never left the failing cluster");
    }
  } finally {
    nearest.failing = false;
  }
  return { ms: (movedAt ?? performance.now()) - started, failedRequests };
}
