import { KubeConfig } from "@kubernetes/client-node";
import { ConfigurationError } from "../lib/configuration-error.js";
import { EXIT_CODES } from "../lib/exit-codes.js";
import type { Logger } from "../lib/logger.js";
import { shutdownSignal } from "../lib/signals.js";
import type { SyncConfig } from "./config.js";
import { type LeaderElector, type LeaderElectorFactory, leaseElector } from "./elector.js";
import type { ClusterWatch } from "./kube/cluster-watch.js";
import { createKubeApi } from "./kube/kube-api.js";
import { createReachability, type Reachability } from "./kube/reachability.js";
import { startLiveHealth } from "./live-health.js";
import { clusterWatchFor, fencedWriter, publishPipelineFor, stopInOrder } from "./live-wiring.js";
import { createSyncMetrics, type SyncMetrics } from "./metrics.js";
import type { Reconciler } from "./publish/reconciler.js";
import { repushOnReconnect } from "./publish/repush-on-reconnect.js";
import { PublishRole } from "./publish-role.js";
import { connectRedis } from "./redis-connection.js";

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
  const { metrics, redis, watch, reachability, role, pipeline, statusWriter, elector } = liveParts(
    config,
    options,
  );
  const health = await startLiveHealth(config, {
    metrics,
    watch,
    reachability,
    redis,
    role,
    repushing: () => pipeline.heartbeat.holding,
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
    stopping = true;
    stopped ??= stopInOrder({
      watch,
      synced,
      pipeline,
      role,
      statusWriter,
      elector,
      health,
      redis,
      logger,
      flushTimeoutMs: options.flushTimeoutMs ?? 5_000,
    }).then(() => logger.info("sync stopped", { cluster: config.cluster }));
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

/** Everything live mode runs, wired to each other and not started yet (startLive starts them in order). */
function liveParts(config: SyncConfig, options: LiveOptions) {
  const { logger } = options;
  const kubeConfig = options.kubeConfig ?? defaultKubeConfig();
  const metrics = createSyncMetrics({ cluster: config.cluster });
  const redis = connectRedis(config.redis, logger, metrics);
  const fenced = fencedWriter(config, redis, logger);
  const api = createKubeApi(kubeConfig);
  const reachability = createReachability({ logger });

  let reconciler: Reconciler | undefined;
  const watch = clusterWatchFor(config, { kubeConfig, api, reachability, logger, metrics }, () => reconciler);

  let elector: LeaderElector | undefined;
  const role = new PublishRole({
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
  const { pipeline, statusWriter } = publishPipelineFor(config, {
    api,
    watch,
    role,
    reachability,
    logger,
    metrics,
  });
  reconciler = pipeline.reconciler;

  // A first beat sent before Redis was reachable never wrote the heartbeat key either: the re-push beats
  // at once when it is done, instead of up to HEARTBEAT_MS later.
  repushOnReconnect(redis, pipeline);

  if (config.leaderElection) {
    const makeElector = options.elector ?? leaseElector(config, kubeConfig, logger, { api, reachability });
    elector = makeElector({
      onStartedLeading: () => role.startedLeading(),
      onStoppedLeading: (reason) => role.stoppedLeading(reason),
      onHeldByAnother: () => role.heldByAnother(),
    });
  }
  return { metrics, redis, watch, reachability, role, pipeline, statusWriter, elector };
}

/**
 * `npm run sync` live mode: runs until SIGTERM/SIGINT, then stops gracefully. Resolves the exit code; after a
 * failed start the caller ends the process, since the Redis client started first keeps it alive.
 */
export async function runLive(config: SyncConfig, options: LiveOptions): Promise<number> {
  // Listening for the signal first: a SIGTERM while it starts stops it once started, not the default way.
  const stopping = shutdownSignal(options.logger);
  let live: LiveSync;
  try {
    live = await startLive(config, options);
  } catch (error) {
    if (error instanceof ConfigurationError) {
      options.logger.error(error.message);
      return EXIT_CODES.configuration;
    }
    options.logger.error("sync failed to start", { error });
    return EXIT_CODES.failure;
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
