import { KubeConfig } from "@kubernetes/client-node";
import { settlesWithin } from "../lib/async.js";
import { exponentialDelay } from "../lib/backoff.js";
import type { Logger } from "../lib/logger.js";
import { createRedisClient, type RedisClient, untilReady } from "../store/redis/client.js";
import { describeRedisTarget, type RedisTarget } from "../store/redis/target.js";
import { createRedisClusterWriter } from "../store/redis/writer.js";
import type { ClusterWriter } from "../store/store.js";
import type { SyncConfig } from "./config.js";
import { type HealthServer, startHealthServer } from "./health-server.js";
import { type ClusterWatch, createClusterWatch } from "./kube/cluster-watch.js";
import { createLeaderElection } from "./kube/leader.js";
import { cacheFromObjects, readManifestFolder } from "./kube/manifests.js";
import { createSyncMetrics, type SyncMetrics } from "./metrics.js";
import { createHeartbeat } from "./publish/heartbeat.js";
import { createReconciler, type Reconciler } from "./publish/reconciler.js";
import { createSafetyValve } from "./publish/safety-valve.js";
import { exposeService } from "./translate/exposure.js";

/** What live mode needs from leader election (sync/leader.ts). */
export interface LeaderElector {
  start(): void | Promise<void>;
  /** Stops campaigning and releases the Lease if held. */
  stop(): Promise<void>;
  isLeader(): boolean;
}

export type LeaderElectorFactory = (callbacks: {
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}) => LeaderElector;

export interface LiveOptions {
  readonly logger: Logger;
  /** Default: loadFromDefault() (in-cluster service account, or KUBECONFIG). */
  readonly kubeConfig?: KubeConfig;
  /** Default: a coordination.k8s.io Lease election (sync/leader.ts) when config.leaderElection is on. */
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
 */
export async function startLive(config: SyncConfig, options: LiveOptions): Promise<LiveSync> {
  const { logger } = options;
  const kubeConfig = options.kubeConfig ?? defaultKubeConfig();
  const metrics = createSyncMetrics({ cluster: config.cluster });
  const redis = connectRedis(config.redis, logger, metrics);
  const writer = createRedisClusterWriter(redis, { prefix: config.prefix, cluster: config.cluster });

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
  const activeReconciler = createReconciler({
    cache: watch,
    writer,
    cluster: config.cluster,
    expose: exposeService,
    valve: createSafetyValve(config.valve),
    logger,
    metrics,
    debounceMs: config.debounceMs,
    maxWaitMs: config.maxWaitMs,
  });
  reconciler = activeReconciler;
  /** Re-pushes the whole state with no heartbeat leaving until the store holds it again. */
  const repushBeforeBeating = () => heartbeat.holdUntil(activeReconciler.fullResync());
  const heartbeat = heartbeatFor(writer, config, logger, metrics, repushBeforeBeating);

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
    repushBeforeBeating();
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
      await heartbeat.stop();
      await activeReconciler.stop();
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
  await waitForSignal(options.logger);
  await live.stop();
  return 0;
}

/**
 * `--from DIR` without `--print`: publishes the folder's manifests to the store (only what differs,
 * leftovers of earlier runs removed) and writes one heartbeat so routers discover the cluster.
 * With `once` false it keeps the heartbeat going until SIGTERM/SIGINT.
 */
export async function publishFromFolder(
  dir: string,
  config: SyncConfig,
  options: { logger: Logger; once: boolean },
): Promise<number> {
  const { logger } = options;
  const loaded = await readManifestFolder(dir, logger);
  if (!loaded) return 1;
  const metrics = createSyncMetrics({ cluster: config.cluster });
  const redis = connectRedis(config.redis, logger, metrics);
  try {
    if (!(await untilReady(redis, 10_000))) throw new Error("redis not ready within 10000 ms");
    const writer = createRedisClusterWriter(redis, { prefix: config.prefix, cluster: config.cluster });
    const reconciler = createReconciler({
      cache: cacheFromObjects(loaded.services, loaded.slices),
      writer,
      cluster: config.cluster,
      expose: exposeService,
      // The folder is the operator's explicit desired state: nothing to wait for, so no hold.
      valve: createSafetyValve({ ...config.valve, holdMs: 0 }),
      logger,
      metrics,
    });
    await reconciler.enable();
    const pending = reconciler.pending;
    await reconciler.stop();
    if (pending > 0) {
      logger.error("could not write every Service to the store", { pending });
      return 1;
    }
    const heartbeat = heartbeatFor(writer, config, logger, metrics);
    heartbeat.start();
    logger.info("published manifests", {
      dir,
      cluster: config.cluster,
      written: metrics.get("writes"),
      removed: metrics.get("deletes"),
      unchanged: metrics.get("skippedUnchanged"),
    });
    if (!options.once) await waitForSignal(logger);
    await heartbeat.stop();
    return 0;
  } catch (error) {
    logger.error("publishing manifests failed", { error });
    return 1;
  } finally {
    await closeRedis(redis);
  }
}

function defaultKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
}

/**
 * One long-lived client. No offline queue: while Redis is down a write fails at once and the reconciler
 * keeps it dirty with backoff, instead of piling commands up in memory; 'ready' then triggers a full resync.
 */
function connectRedis(target: RedisTarget, logger: Logger, metrics: SyncMetrics): RedisClient {
  const redis = createRedisClient(target, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    connectionName: "edgeslice-sync",
    retryStrategy: (attempt) => exponentialDelay(attempt, { initialMs: 100, maxMs: 5_000 }),
  });
  logger.info("redis target", { redis: describeRedisTarget(target) });
  let down = false;
  redis.on("ready", () => {
    metrics.set("redisUp", 1);
    if (down) logger.info("redis connection ready again");
    down = false;
  });
  redis.on("error", (error: Error) => {
    if (!down) logger.warn("redis connection error", { error });
    down = true;
  });
  redis.on("close", () => {
    metrics.set("redisUp", 0);
    down = true;
  });
  redis.connect().catch(() => {
    // Reported through 'error'; retryStrategy keeps reconnecting.
  });
  return redis;
}

async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status === "ready") await settlesWithin(redis.quit(), 2_000).catch(() => {});
  redis.disconnect();
}

function waitForSignal(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      logger.info("shutting down", { signal });
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
      resolve();
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
}

/**
 * The Lease election with client-go's usual proportions: renew at a third of the lease, retry at a sixth,
 * so a live leader renews twice before a peer could consider its lease expired.
 */
function leaseElector(config: SyncConfig, kubeConfig: KubeConfig, logger: Logger): LeaderElectorFactory {
  return (callbacks) =>
    createLeaderElection({
      kubeConfig,
      namespace: config.leaseNamespace,
      name: config.leaseName,
      identity: config.identity,
      leaseDurationMs: config.leaderLeaseMs,
      renewIntervalMs: Math.max(100, Math.floor(config.leaderLeaseMs / 3)),
      retryIntervalMs: Math.max(100, Math.floor(config.leaderLeaseMs / 6)),
      logger,
      ...callbacks,
    });
}

function heartbeatFor(
  writer: ClusterWriter,
  config: SyncConfig,
  logger: Logger,
  metrics: SyncMetrics,
  onStoreLost?: () => void,
) {
  return createHeartbeat({
    writer,
    holder: config.identity,
    leaseMs: config.leaseMs,
    intervalMs: config.heartbeatMs,
    logger,
    metrics,
    ...(onStoreLost ? { onStoreLost } : {}),
  });
}
