import type { Redis } from "ioredis";
import type { Logger } from "../../../lib/logger.js";
import { decodeServiceRecord } from "../../../store/records.js";
import { createRedisClusterWriter } from "../../../store/redis/writer.js";
import type { ClusterWriter } from "../../../store/store.js";
import { createClusterWatch } from "../../../sync/kube/cluster-watch.js";
import { createSyncMetrics } from "../../../sync/metrics.js";
import { createReconciler } from "../../../sync/publish/reconciler.js";
import { createSafetyValve } from "../../../sync/publish/safety-valve.js";
import { exposeService } from "../../../sync/translate/exposure.js";
import type { FakeKube } from "../../fake-kube/server.js";

/**
 * The sync's real parts wired as sync/live.ts wires them (client-node informers → reconciler → Redis writer),
 * in-process and with short timings so faults resolve within a test: a 600 ms watchdog for silent watches,
 * 20-200 ms backoff, 10 ms debounce. Leader election, heartbeat and the health server are left out.
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
  const writer = createRedisClusterWriter(options.redis, {
    prefix: options.prefix,
    cluster: options.cluster,
  });
  let markDirty: (namespace: string, name: string) => void = () => {};
  const watch = createClusterWatch({
    kubeConfig: options.kube.kubeConfig(),
    logger,
    onServiceChanged: (namespace, name) => markDirty(namespace, name),
    watchdogMs: 600,
    backoff: { initialMs: 20, maxMs: 200 },
    resyncIntervalMs: 0,
  });
  const reconciler = createReconciler({
    cache: watch,
    writer,
    cluster: options.cluster,
    expose: exposeService,
    valve: createSafetyValve({ maxLossFraction: 0.5, minLoss: 2, holdMs: 0 }),
    logger,
    metrics: createSyncMetrics({ cluster: options.cluster }),
    debounceMs: 10,
    retryBaseMs: 20,
    retryMaxMs: 200,
  });
  markDirty = (namespace, name) => reconciler.markDirty(namespace, name);
  await watch.start();
  await reconciler.enable();
  return {
    writer,
    get restarts() {
      return watch.health().restarts;
    },
    async stored() {
      const out = new Map<string, string[]>();
      for (const [service, raw] of await writer.load()) {
        const decoded = decodeServiceRecord(raw);
        if (!decoded.ok) throw new Error(`the sync wrote an invalid record for ${service}: ${decoded.error}`);
        out.set(service, decoded.value.ipv4.endpoints.map((e) => `${e.ip}:${e.port}`).sort());
      }
      return out;
    },
    async stop() {
      await watch.stop();
      await reconciler.stop();
    },
  };
}
