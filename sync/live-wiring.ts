import type { KubeConfig } from "@kubernetes/client-node";
import { settlesWithin } from "../lib/async.js";
import type { Logger } from "../lib/logger.js";
import { createWarnOnce } from "../lib/warn-once.js";
import type { RedisClient } from "../store/redis/client.js";
import { createRedisWriter } from "../store/redis/writer.js";
import type { ClusterWriter, WriterFence } from "../store/store.js";
import type { SyncConfig } from "./config.js";
import type { LeaderElector } from "./elector.js";
import type { HealthServer } from "./health-server.js";
import { type ClusterWatch, createClusterWatch } from "./kube/cluster-watch.js";
import type { KubeApi } from "./kube/kube-api.js";
import type { Reachability } from "./kube/reachability.js";
import { createStatusWriter, type StatusWriter } from "./kube/status-writer.js";
import type { SyncMetrics } from "./metrics.js";
import { createPublishPipeline, type PublishPipeline } from "./publish/pipeline.js";
import type { Reconciler } from "./publish/reconciler.js";
import type { PublishRole } from "./publish-role.js";
import { closeRedis } from "./redis-connection.js";

/** The cluster's Redis writer, fenced so that only the replica holding the fence writes (publish-role.ts). */
export function fencedWriter(
  config: SyncConfig,
  redis: RedisClient,
  logger: Logger,
): ClusterWriter & { fence: WriterFence } {
  const registryWarnings = createWarnOnce(logger);
  return createRedisWriter(redis, {
    prefix: config.prefix,
    cluster: config.cluster,
    fence: { holder: config.identity, ttlMs: config.fenceMs },
    place: config.place,
    onRegistryError: (error) =>
      registryWarnings.warn(
        "registry",
        String(error),
        "could not add the cluster to the registry of clusters",
        {
          error,
          hint: "the sync's Redis ACL needs the selector (~<prefix>:clusters +sadd)",
        },
      ),
  }) as ClusterWriter & { fence: WriterFence };
}

export interface WatchParts {
  readonly kubeConfig: KubeConfig;
  readonly api: KubeApi;
  readonly reachability: Reachability;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
}

/** The cluster's informers, feeding whichever reconciler `reconciler()` gives once the pipeline exists. */
export function clusterWatchFor(
  config: SyncConfig,
  parts: WatchParts,
  reconciler: () => Reconciler | undefined,
): ClusterWatch {
  const { metrics } = parts;
  return createClusterWatch({
    kubeConfig: parts.kubeConfig,
    api: parts.api,
    reachability: parts.reachability,
    namespaces: config.namespaces,
    logger: parts.logger,
    resyncIntervalMs: config.resyncIntervalMs,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
    stallGraceMs: config.watchStallGraceMs,
    onServiceChanged: (namespace, name, receivedAt) => reconciler()?.markDirty(namespace, name, receivedAt),
    onRoutesChanged: (receivedAt) => reconciler()?.markRoutesDirty(receivedAt),
    missingKindRetryMs: config.missingKindRetryMs,
    onResync: () => void reconciler()?.fullResync(),
    onError: () => metrics.count("informerRestarts"),
    observer: {
      relisted: (resource, reason) => metrics.relisted(resource, reason),
      missing: () => metrics.count("missingKinds"),
      watchRestarted: (resource, reason) => metrics.watchRestarted(resource, reason),
    },
  });
}

export interface PipelineParts {
  readonly api: KubeApi;
  readonly watch: ClusterWatch;
  readonly role: PublishRole;
  readonly reachability: Reachability;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
}

/**
 * The publish pipeline over the cache of `watch`, writing through the role's writer (only while this replica
 * publishes), and the status writer that tells each route object what became of it.
 */
export function publishPipelineFor(
  config: SyncConfig,
  parts: PipelineParts,
): { pipeline: PublishPipeline; statusWriter: StatusWriter } {
  const { watch, role, reachability, logger, metrics } = parts;
  const statusWriter = createStatusWriter({
    api: parts.api,
    cached: (kind, namespace, name) => watch.routeObject(kind, namespace, name),
    controllerName: config.routes.gatewayController,
    allowed: () => role.publishing,
    logger,
    metrics,
  });
  const pipeline = createPublishPipeline({
    cache: watch,
    writer: role.writer,
    routeSettings: config.routes,
    tlsStoreKey: config.tlsStoreKey,
    onDesired: (desired) => statusWriter.update(desired.statuses),
    valve: config.valve,
    holder: config.identity,
    leaseMs: config.leaseMs,
    heartbeatMs: config.heartbeatMs,
    repushWhenStoreLost: true,
    unreachableSince: () => reachability.unreachableSince,
    logger,
    metrics,
    timing: { debounceMs: config.debounceMs, maxWaitMs: config.maxWaitMs },
  });
  return { pipeline, statusWriter };
}

export interface LiveParts {
  readonly watch: ClusterWatch;
  /** Settles once the first sync finished or failed. */
  readonly synced: Promise<unknown>;
  readonly pipeline: PublishPipeline;
  readonly role: PublishRole;
  readonly statusWriter: StatusWriter;
  readonly elector: LeaderElector | undefined;
  readonly health: HealthServer;
  readonly redis: RedisClient;
  readonly logger: Logger;
  readonly flushTimeoutMs: number;
}

/** A graceful stop: stop watching, flush pending writes, release the Lease, then the fence, close Redis. */
export async function stopInOrder(parts: LiveParts): Promise<void> {
  const { pipeline, logger } = parts;
  await parts.watch.stop();
  await parts.synced;
  if (pipeline.reconciler.enabled) {
    if (!(await settlesWithin(pipeline.reconciler.flush(), parts.flushTimeoutMs))) {
      logger.warn("pending writes not flushed before the shutdown deadline", {
        pending: pipeline.reconciler.pending,
      });
    }
  }
  await parts.role.stop();
  await parts.statusWriter.stop();
  await pipeline.stop();
  // The Lease first, then the fence: a standby that sees the fence free finds the Lease free too.
  await parts.elector?.stop();
  await parts.role.release();
  await parts.health.close();
  await closeRedis(parts.redis);
}
