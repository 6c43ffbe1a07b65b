import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { silentLogger } from "../../lib/logger.js";
import { createRedisSnapshotSource } from "../../store/redis/source.js";
import { startFakeKube } from "../../test/fake-kube/server.js";
import { freePort, startPrivateRedis } from "../../test/support/redis.js";
import { percentile, serviceCount, waitFor } from "../convergence/changes.js";
import { type MemorySample, startSyncProcess, writeKubeconfig } from "../convergence/sync-process.js";
import { applyChurn, type ChurnPace } from "./churn.js";
import { createSyncWorkload, type SyncWorkloadShape, workloadEndpoints } from "./sync-workload.js";

const CLUSTER = "scale";
const PREFIX = "edgeslice-scale";

export interface SyncScaleOptions extends SyncWorkloadShape, ChurnPace {}

export interface SyncScaleResult {
  readonly services: number;
  readonly endpoints: number;
  /** Spawn → the reader's snapshot holds every Service. */
  readonly visibleMs: number;
  readonly memoryAfterSync: MemorySample;
  readonly memoryAtEnd: MemorySample;
  readonly changes: number;
  readonly observed: number;
  readonly achievedRate: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/**
 * The built sync (dist/sync.js, as the image ships it) over the fake API server holding the whole workload,
 * writing to a private redis-server; the parent reads it through the router's own Redis reader and applies
 * the churn. The caller builds first.
 */
export async function runSyncScale(
  options: SyncScaleOptions,
  log: (line: string) => void,
): Promise<SyncScaleResult> {
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const redisServer = await startPrivateRedis();
    cleanups.unshift(() => redisServer.stop());
    const kube = await startFakeKube({ historyLimit: 100_000 });
    cleanups.unshift(() => kube.close());
    const workload = createSyncWorkload(options);
    workload.applyAll(kube);

    const readerRedis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    readerRedis.on("error", () => {});
    cleanups.unshift(async () => readerRedis.disconnect());
    const reader = createRedisSnapshotSource({
      redis: readerRedis,
      prefix: PREFIX,
      logger: silentLogger,
      now: Date.now,
      refreshIntervalMs: 200,
    });
    await reader.start();
    cleanups.unshift(() => reader.close());

    const dir = await mkdtemp(join(tmpdir(), "edgeslice-scale-"));
    cleanups.unshift(() => rm(dir, { recursive: true, force: true }));
    const syncPort = await freePort();
    const sync = startSyncProcess({
      runner: "built",
      syncPort,
      env: {
        KUBECONFIG: await writeKubeconfig(dir, kube.kubeConfig().exportConfig()),
        CLUSTER_NAME: CLUSTER,
        REDIS_URL: redisServer.url,
        EDGESLICE_PREFIX: PREFIX,
        LEADER_ELECTION: "false",
        SYNC_PORT: String(syncPort),
        SYNC_HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        VALVE_HOLD_MS: "0",
      },
    });
    cleanups.unshift(() => sync.stop());
    log(
      `  sync: ${workload.services} Services, ${workloadEndpoints(options)} endpoints, waiting for the first full sync ...`,
    );
    await sync.until("/readyz", 240_000);
    await waitFor(
      () => serviceCount(reader, CLUSTER) >= workload.services,
      120_000,
      "the reader to see every Service",
    );
    const visibleMs = sync.sinceSpawnMs();
    const memoryAfterSync = await sync.memory();
    log(
      `  sync: visible after ${Math.round(visibleMs)} ms; ${options.changesPerSecond} changes/s for ${options.changeSeconds} s ...`,
    );
    const churn = await applyChurn(kube, reader, CLUSTER, workload, options);
    const memoryAtEnd = await sync.memory();
    const sorted = [...churn.observedMs].sort((a, b) => a - b);
    return {
      services: workload.services,
      endpoints: workloadEndpoints(options),
      visibleMs,
      memoryAfterSync,
      memoryAtEnd,
      changes: churn.applied,
      observed: sorted.length,
      achievedRate: churn.achievedRate,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted[sorted.length - 1] ?? Number.NaN,
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
  }
}
