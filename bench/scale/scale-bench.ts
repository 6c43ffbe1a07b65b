import { join } from "node:path";
import { Redis } from "ioredis";
import { DEFAULT_PREFIX } from "../../store/names.js";
import { createRedisWriter } from "../../store/redis/writer.js";
import { startPrivateRedis } from "../../test/support/redis.js";
import { buildSync } from "../convergence/sync-process.js";
import { publishBenchRoute } from "../proxy/bench-route.js";
import { startChild } from "../support/child.js";
import { type RouterScaleResult, runRouterScale } from "./router-scale.js";
import { writeScaleStore } from "./store-fixture.js";
import { runSyncScale, type SyncScaleOptions, type SyncScaleResult } from "./sync-scale.js";
import { runWorkersScale, type WorkersScaleResult } from "./workers-scale.js";

const BACKEND = new URL("../proxy/backend-process.ts", import.meta.url).pathname;

export interface RouterStoreSize {
  readonly clusters: number;
  readonly servicesPerCluster: number;
}

export interface ScaleBenchOptions {
  readonly sync: SyncScaleOptions;
  /** Ascending; the router's RSS is reported at the last (largest). */
  readonly routerSizes: readonly RouterStoreSize[];
  readonly routerChanges: number;
  readonly routerChangesPerSecond: number;
  /** Services in one cluster, ascending; the isolate heap is reported at the last. */
  readonly workersSizes: readonly number[];
  readonly workersChanges: number;
  readonly endpointsPerService: number;
  /** When set, each router's CPU profile of its changes phase is written here (router-S.cpuprofile). */
  readonly profileDir?: string | undefined;
}

export interface ScaleBenchResult {
  readonly sync: SyncScaleResult;
  readonly routers: readonly RouterScaleResult[];
  readonly workers: readonly WorkersScaleResult[];
}

/** Builds once, then the sync at size, the built router at each store size, and the Workers reader. */
export async function runScaleBench(
  options: ScaleBenchOptions,
  log: (line: string) => void,
): Promise<ScaleBenchResult> {
  log("  npm run build (the scale bench runs node dist/sync.js and node dist/router.js) ...");
  await buildSync();
  const sync = await runSyncScale(options.sync, log);

  const redisServer = await startPrivateRedis();
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  const backend = startChild(BACKEND, { stdout: "ignore" });
  try {
    const { port: backendPort } = await backend.next<{ port: number }>("ready", 30_000);
    const routers: RouterScaleResult[] = [];
    for (const size of options.routerSizes) {
      await redis.flushall();
      const total = size.clusters * size.servicesPerCluster;
      log(`  router: writing ${size.clusters} clusters of ${size.servicesPerCluster} Services ...`);
      const store = await writeScaleStore(redis, {
        prefix: DEFAULT_PREFIX,
        clusters: size.clusters,
        servicesPerCluster: size.servicesPerCluster,
        endpointsPerService: options.endpointsPerService,
      });
      await publishBenchRoute(
        createRedisWriter(redis, { prefix: DEFAULT_PREFIX, cluster: store.clusterName(0) }),
        backendPort,
      );
      log(`  router: ${total} Services, ${options.routerChanges} changes ...`);
      routers.push(
        await runRouterScale({
          redisUrl: redisServer.url,
          store,
          changes: options.routerChanges,
          changesPerSecond: options.routerChangesPerSecond,
          profileFile: options.profileDir && join(options.profileDir, `router-${total}.cpuprofile`),
        }),
      );
    }
    const workers: WorkersScaleResult[] = [];
    for (const services of options.workersSizes) {
      await redis.flushall();
      log(`  workers: ${services} Services, ${options.workersChanges} changes ...`);
      const store = await writeScaleStore(redis, {
        prefix: "edgeslice-scale-workers",
        clusters: 1,
        servicesPerCluster: services,
        endpointsPerService: options.endpointsPerService,
      });
      workers.push(
        await runWorkersScale({ redisUrl: redisServer.url, store, changes: options.workersChanges }),
      );
    }
    return { sync, routers, workers };
  } finally {
    await backend.stop();
    redis.disconnect();
    await redisServer.stop();
  }
}
