import { KubeConfig } from "@kubernetes/client-node";
import { settlesWithin } from "../lib/async.js";
import type { Logger } from "../lib/logger.js";
import { shutdownSignal } from "../lib/signals.js";
import { createRedisWriter } from "../store/redis/writer.js";
import type { SyncConfig } from "./config.js";
import { type LeaderElector, type LeaderElectorFactory, leaseElector } from "./elector.js";
import { type HealthServer, startHealthServer } from "./health-server.js";
import { type ClusterWatch, createClusterWatch } from "./kube/cluster-watch.js";
import { createSyncMetrics, type SyncMetrics } from "./metrics.js";
import { createPublishPipeline } from "./publish/pipeline.js";
import type { Reconciler } from "./publish/reconciler.js";
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
  /** True while this replica publishes (leader, synced). */
  publishing(): boolean;
  /** Graceful stop: stop watching, flush pending writes, release the Lease, close Redis. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Live mode: informers → reconciler → Redis, with leader election, heartbeat and the health server.
 * Publishing starts only once the informers completed their first full list AND this replica leads;
 * it stops the moment leadership is lost.
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
  const writer = createRedisWriter(redis, { prefix: config.prefix, cluster: config.cluster });

  let reconciler: Reconciler | undefined;
  const watch = createClusterWatch({
    kubeConfig,
    namespaces: config.namespaces,
    logger,
    resyncIntervalMs: config.resyncIntervalMs,
    onServiceChanged: (namespace, name) => reconciler?.markDirty(namespace, name),
    onResync: () => void reconciler?.fullResync(),
    onError: () => metrics.count("informerRestarts"),
  });
  const pipeline = createPublishPipeline({
    cache: watch,
    writer,
    valve: config.valve,
    holder: config.identity,
    leaseMs: config.leaseMs,
    heartbeatMs: config.heartbeatMs,
    repushWhenStoreLost: true,
    logger,
    metrics,
    timing: { debounceMs: config.debounceMs, maxWaitMs: config.maxWaitMs },
  });
  const { heartbeat } = pipeline;
  const activeReconciler = pipeline.reconciler;
  reconciler = activeReconciler;

  let leading = !config.leaderElection;
  let stopping = false;
  // Leadership and sync events arrive from different sources; one queue keeps enable/disable in order.
  let transitions: Promise<void> = Promise.resolve();
  const reconcileRole = () => {
    transitions = transitions.then(async () => {
      const shouldPublish = leading && watch.synced && !stopping;
      metrics.set("leader", leading ? 1 : 0);
      if (shouldPublish && !activeReconciler.enabled) {
        logger.info("publishing to the store", { cluster: config.cluster, identity: config.identity });
        await activeReconciler.enable();
        heartbeat.start();
      } else if (!shouldPublish && activeReconciler.enabled) {
        logger.info("no longer publishing", { cluster: config.cluster, leading, synced: watch.synced });
        await heartbeat.stop();
        await activeReconciler.disable();
      }
    });
    return transitions;
  };

  redis.on("ready", () => {
    if (!activeReconciler.enabled) return;
    // Redis may have restarted empty: compare everything and re-push what is missing, then beat at once.
    // Routers find a cluster only by its heartbeat key, which a restart lost or a first beat sent before
    // Redis was reachable never wrote; the next periodic beat is up to LEASE_MS / 3 away. No beat leaves
    // during the re-push, so routers keep their last view (fail static) until every record is back.
    pipeline.repushBeforeBeating();
  });

  let elector: LeaderElector | undefined;
  if (config.leaderElection) {
    const makeElector = options.elector ?? leaseElector(config, kubeConfig, logger);
    elector = makeElector({
      onStartedLeading: () => {
        leading = true;
        void reconcileRole();
      },
      onStoppedLeading: () => {
        leading = false;
        void reconcileRole();
      },
    });
  }

  const health: HealthServer = await startHealthServer({
    port: config.port,
    host: config.host,
    metrics,
    readiness: () => ({ synced: watch.synced, redis: redis.status === "ready" }),
  });

  const synced = watch.start().then(
    () => {
      metrics.set("synced", 1);
      return reconcileRole();
    },
    (error: unknown) => {
      if (!stopping) logger.error("informers failed to start", { error });
    },
  );
  await elector?.start();
  if (!config.leaderElection) metrics.set("leader", 1);

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      stopping = true;
      await watch.stop();
      await synced;
      if (activeReconciler.enabled) {
        if (!(await settlesWithin(activeReconciler.flush(), options.flushTimeoutMs ?? 5_000))) {
          logger.warn("pending writes not flushed before the shutdown deadline", {
            pending: activeReconciler.pending,
          });
        }
      }
      await pipeline.stop();
      await transitions;
      await elector?.stop();
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
    reconciler: activeReconciler,
    publishing: () => activeReconciler.enabled,
    stop,
  };
}

/** `npm run sync` live mode: runs until SIGTERM/SIGINT, then stops gracefully. Resolves the exit code. */
export async function runLive(config: SyncConfig, options: LiveOptions): Promise<number> {
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
  await shutdownSignal(options.logger);
  await live.stop();
  return 0;
}

function defaultKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
}
