import type { Redis } from "ioredis";
import type { Logger } from "../../../lib/logger.js";
import { createRedisWriter } from "../../../store/redis/writer.js";
import { decodeServiceRecordV2 } from "../../../store/services.js";
import type { ClusterWriter } from "../../../store/store.js";
import { createClusterWatch } from "../../../sync/kube/cluster-watch.js";
import { createSyncMetrics } from "../../../sync/metrics.js";
import { createPublishPipeline } from "../../../sync/publish/pipeline.js";
import type { FakeKube } from "../../fake-kube/server.js";

/**
 * The sync's real parts wired as sync/live.ts wires them (reflectors → publish pipeline → Redis writer),
 * in-process and with short timings so faults resolve within a test: watches the server ends every 1-2 s,
 * half-dead after their timeout plus 300 ms, 20-200 ms retries, 10 ms debounce. Leader election, the heartbeat (never started; a test beats
 * through `writer` when it needs routers to see the cluster) and the health server are left out.
 */
export interface SyncStack {
  readonly writer: ClusterWriter;
  /** Informer restarts so far (each list/watch failure or watchdog firing). */
  readonly restarts: number;
  /** The store's view: `ns/name` → sorted `ip:port` of the active IPv4 endpoints. */
  stored(): Promise<Map<string, string[]>>;
  stop(): Promise<void>;
}

export async function startSyncStack(options: {
  kube: FakeKube;
  redis: Redis;
  prefix: string;
  cluster: string;
  logger: Logger;
}): Promise<SyncStack> {
  const { logger } = options;
  const writer = createRedisWriter(options.redis, {
    prefix: options.prefix,
    cluster: options.cluster,
  });
  let markDirty: (namespace: string, name: string) => void = () => {};
  let markRoutesDirty: () => void = () => {};
  const watch = createClusterWatch({
    kubeConfig: options.kube.kubeConfig(),
    logger,
    onServiceChanged: (namespace, name) => markDirty(namespace, name),
    onRoutesChanged: () => markRoutesDirty(),
    watchTimeoutSeconds: 1,
    stallGraceMs: 300,
    retry: { initialMs: 20, maxMs: 200 },
    resyncIntervalMs: 0,
  });
  const pipeline = createPublishPipeline({
    cache: watch,
    writer,
    valve: { maxLossFraction: 0.5, minLoss: 2, holdMs: 0 },
    holder: "sync-stack",
    leaseMs: 60_000,
    logger,
    metrics: createSyncMetrics({ cluster: options.cluster }),
    timing: { debounceMs: 10, retryBaseMs: 20, retryMaxMs: 200 },
  });
  markDirty = (namespace, name) => pipeline.reconciler.markDirty(namespace, name);
  markRoutesDirty = () => pipeline.reconciler.markRoutesDirty();
  await watch.start();
  await pipeline.reconciler.enable();
  return {
    writer,
    get restarts() {
      return watch.health().restarts;
    },
    async stored() {
      const out = new Map<string, string[]>();
      for (const [service, raw] of await writer.load()) {
        const decoded = decodeServiceRecordV2(raw);
        if (!decoded.ok) throw new Error(`the sync wrote an invalid record for ${service}: ${decoded.error}`);
        const endpoints = decoded.value.ports.flatMap((port) => port.ipv4.endpoints);
        out.set(service, endpoints.map((e) => `${e.ip}:${e.port}`).sort());
      }
      return out;
    },
    async stop() {
      await watch.stop();
      await pipeline.stop();
    },
  };
}
