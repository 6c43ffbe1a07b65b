import { KubeConfig } from "@kubernetes/client-node";
import { settlesWithin } from "../lib/async.js";
import type { Logger } from "../lib/logger.js";
import { shutdownSignal } from "../lib/signals.js";
import { createWarnOnce } from "../lib/warn-once.js";
import { createRedisWriter } from "../store/redis/writer.js";
import type { ClusterWriter, WriterFence } from "../store/store.js";
import type { SyncConfig } from "./config.js";
import { type LeaderElector, type LeaderElectorFactory, leaseElector } from "./elector.js";
import { type HealthServer, startHealthServer } from "./health-server.js";
import { type ClusterWatch, createClusterWatch } from "./kube/cluster-watch.js";
import { createKubeApi } from "./kube/kube-api.js";
import { createReachability, type Reachability } from "./kube/reachability.js";
import { createStatusWriter } from "./kube/status-writer.js";
import { createSyncMetrics, type SyncMetrics } from "./metrics.js";
import { createPublishPipeline } from "./publish/pipeline.js";
import type { Reconciler } from "./publish/reconciler.js";
import { createPublishRole } from "./publish-role.js";
import { closeRedis, connectRedis } from "./redis-connection.js";

export interface LiveOptions {
  readonly logger: Logger;
  /** Default: loadFromDefault() (in-cluster service account, or KUBECONFIG). */
  readonly kubeConfig?: KubeConfig;
  /** Default: a coordination.k8s.io Lease election (kube/leader.ts) when config.leaderElection is on. */
  readonly elector?: LeaderElectorFactory;
  /** Longest wait for pending writes on shutdown. */
  readonly flushTimeoutMs?: number;
}

export interface LiveSync {
  readonly healthPort: number;
  readonly metrics: SyncMetrics;
  readonly watch: ClusterWatch;
  readonly reconciler: Reconciler;
  readonly reachability: Reachability;
  /** True while this replica publishes (holds the writer fence, synced). */
  publishing(): boolean;
  /** Graceful stop: stop watching, flush pending writes, release the Lease, then the fence, close Redis. */
  stop(): Promise<void>;
}

/**
 * Live mode: informers → reconciler → Redis, with leader election, the writer fence (publish-role.ts),
 * heartbeat and the health server. Publishing starts only once the informers completed their first full list
 * AND this replica holds the Lease and the fence; it stops the moment the fence is lost, or the Lease is lost
 * to another replica. While the API server cannot be reached the leader keeps publishing its last known
 * state (fail static), and says since when in its heartbeat record, /readyz and /metrics.
 *
 * @example
 * const live = await startLive(parseSyncConfig(process.env), { logger });
 * live.publishing();
 * await live.stop();
 */
export async function startLive(config: SyncConfig, options: LiveOptions): Promise<LiveSync> {
  const { logger } = options;
  const kubeConfig = options.kubeConfig ?? defaultKubeConfig();
  const metrics = createSyncMetrics({ cluster: config.cluster });
  const redis = connectRedis(config.redis, logger, metrics);
  const registryWarnings = createWarnOnce(logger);
  const fenced = createRedisWriter(redis, {
    prefix: config.prefix,
    cluster: config.cluster,
    fence: { holder: config.identity, ttlMs: config.fenceMs },
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
  const api = createKubeApi(kubeConfig);
  const reachability = createReachability({ logger });

  let reconciler: Reconciler | undefined;
  const watch = createClusterWatch({
    kubeConfig,
    api,
    reachability,
    namespaces: config.namespaces,
    logger,
    resyncIntervalMs: config.resyncIntervalMs,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
    stallGraceMs: config.watchStallGraceMs,
    onServiceChanged: (namespace, name, receivedAt) => reconciler?.markDirty(namespace, name, receivedAt),
    onRoutesChanged: (receivedAt) => reconciler?.markRoutesDirty(receivedAt),
    missingKindRetryMs: config.missingKindRetryMs,
    onResync: () => void reconciler?.fullResync(),
    onError: () => metrics.count("informerRestarts"),
    observer: {
      relisted: (resource, reason) => metrics.relisted(resource, reason),
      missing: () => metrics.count("missingKinds"),
      watchRestarted: (resource, reason) => metrics.watchRestarted(resource, reason),
    },
  });

  let elector: LeaderElector | undefined;
  const role = createPublishRole({
    writer: fenced,
    leaderElection: config.leaderElection,
    claimMs: config.leaderLeaseMs,
    synced: () => watch.synced,
    kickElection: () => elector?.kick?.(),
    logger,
    metrics,
    publish: async () => {
      // Refresh the lease of a cluster routers already know before the re-push, which may take a while
      // after a takeover; a cluster never registered is announced only once it is whole (heartbeat.start).
      const beat = {
        holder: config.identity,
        leaseMs: config.leaseMs,
        at: Date.now(),
        ifRegistered: true,
        apiserverUnreachableSince: reachability.unreachableSince,
      };
      await fenced.heartbeat(beat).catch(() => false);
      await pipeline.reconciler.enable();
      pipeline.heartbeat.start();
    },
    unpublish: async () => {
      await pipeline.heartbeat.stop();
      await pipeline.reconciler.disable();
    },
  });
  const statusWriter = createStatusWriter({
    api,
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
  reconciler = pipeline.reconciler;

  redis.on("ready", () => {
    if (!pipeline.reconciler.enabled) return;
    // Redis may have restarted empty: compare everything and re-push what is missing, then beat at once.
    // Routers find a cluster only by its heartbeat key, which a restart lost or a first beat sent before
    // Redis was reachable never wrote; the next periodic beat is up to HEARTBEAT_MS away. No beat leaves
    // during the re-push, so routers keep their last view (fail static) until every record is back.
    pipeline.repushBeforeBeating();
  });

  if (config.leaderElection) {
    const makeElector = options.elector ?? leaseElector(config, kubeConfig, logger, { api, reachability });
    elector = makeElector({
      onStartedLeading: () => role.startedLeading(),
      onStoppedLeading: (reason) => role.stoppedLeading(reason),
      onHeldByAnother: () => role.heldByAnother(),
    });
  }

  metrics.beforeRender(() => {
    const since = reachability.unreachableSince;
    metrics.set("apiserverReachable", since === undefined ? 1 : 0);
    metrics.set("apiserverUnreachableSince", since === undefined ? 0 : Math.floor(since / 1000));
    metrics.set("informersRefused", watch.health().refused.length);
  });
  const health: HealthServer = await startHealthServer({
    port: config.port,
    host: config.host,
    metrics,
    readiness: () => {
      const since = reachability.unreachableSince;
      const { refused, missing } = watch.health();
      return {
        synced: watch.synced,
        redis: redis.status === "ready",
        publishing: role.publishing,
        ...(since === undefined ? {} : { apiserverUnreachableSince: new Date(since).toISOString() }),
        ...(refused.length === 0 ? {} : { refused }),
        ...(missing.length === 0 ? {} : { missing }),
      };
    },
  });

  let stopping = false;
  const synced = watch.start().then(
    () => {
      metrics.set("synced", 1);
      return role.update();
    },
    (error: unknown) => {
      if (!stopping) logger.error("informers failed to start", { error });
    },
  );
  role.start();
  await elector?.start();
  if (!config.leaderElection) void role.update();

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      stopping = true;
      await watch.stop();
      await synced;
      if (pipeline.reconciler.enabled) {
        if (!(await settlesWithin(pipeline.reconciler.flush(), options.flushTimeoutMs ?? 5_000))) {
          logger.warn("pending writes not flushed before the shutdown deadline", {
            pending: pipeline.reconciler.pending,
          });
        }
      }
      await role.stop();
      await statusWriter.stop();
      await pipeline.stop();
      // The Lease first, then the fence: a standby that sees the fence free finds the Lease free too.
      await elector?.stop();
      await role.release();
      await health.close();
      await closeRedis(redis);
      logger.info("sync stopped", { cluster: config.cluster });
    })();
    return stopped;
  };

  return {
    healthPort: health.address.port,
    metrics,
    watch,
    reconciler: pipeline.reconciler,
    reachability,
    publishing: () => role.publishing && pipeline.reconciler.enabled,
    stop,
  };
}

/** `npm run sync` live mode: runs until SIGTERM/SIGINT, then stops gracefully. Resolves the exit code. */
export async function runLive(config: SyncConfig, options: LiveOptions): Promise<number> {
  // Listening for the signal first: a SIGTERM while it starts stops it once started, not the default way.
  const stopping = shutdownSignal(options.logger);
  let live: LiveSync;
  try {
    live = await startLive(config, options);
  } catch (error) {
    options.logger.error("sync failed to start", { error });
    return 1;
  }
  options.logger.info("sync started", {
    cluster: config.cluster,
    identity: config.identity,
    namespaces: config.namespaces.length > 0 ? config.namespaces : "all",
    healthPort: live.healthPort,
  });
  await stopping;
  await live.stop();
  return 0;
}

function defaultKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
}
