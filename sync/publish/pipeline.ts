import type { Logger } from "../../lib/logger.js";
import type { ClusterWriter } from "../../store/store.js";
import type { SyncMetrics } from "../metrics.js";
import type { RouteSettings } from "../translate/desired-routes.js";
import type { ClusterCache } from "../translate/types.js";
import { Heartbeat } from "./heartbeat.js";
import { Reconciler, type ReconcilerOptions } from "./reconciler.js";
import { SafetyValve, type ValveConfig } from "./safety-valve.js";

export interface PublishPipelineOptions {
  /** What to publish: the informers' cache, or manifests loaded from a folder. */
  readonly cache: ClusterCache;
  /** Where: one cluster's writer (Redis, or a MemoryStore); its cluster names every record. */
  readonly writer: ClusterWriter;
  readonly valve: ValveConfig;
  /** Who beats: this replica's identity in the heartbeat record. */
  readonly holder: string;
  /** Routers see the cluster as stale once this long passes without a beat. */
  readonly leaseMs: number;
  /** Heartbeat period; leaseMs / 3 when undefined. */
  readonly heartbeatMs?: number | undefined;
  /**
   * Live mode: a beat that finds the heartbeat record gone (the store lost the cluster without a reconnect
   * to tell) re-pushes everything before the next beat. Off for a one-shot publish.
   */
  readonly repushWhenStoreLost?: boolean | undefined;
  /** Since when the API server has not answered, for the heartbeat record; undefined while it answers. */
  readonly unreachableSince?: (() => number | undefined) | undefined;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
  /** Controller names, HOST_CLAIMS, the Ingress load balancer status; the defaults when left out. */
  readonly routeSettings?: RouteSettings | undefined;
  /** TLS_STORE_KEY: seals the certificates of HTTPS listeners (publish-pass.ts). */
  readonly tlsStoreKey?: Uint8Array | undefined;
  /** Each new desired state while publishing (the status writer's input). */
  readonly onDesired?: ReconcilerOptions["onDesired"];
  /** The reconciler's debounce and retry timings; its defaults when left out. */
  readonly timing?: Pick<ReconcilerOptions, "debounceMs" | "maxWaitMs" | "retryBaseMs" | "retryMaxMs">;
}

export interface PublishPipeline {
  readonly reconciler: Reconciler;
  readonly heartbeat: Heartbeat;
  /** Re-pushes the whole state with no heartbeat leaving until the store holds it again. */
  repushBeforeBeating(): void;
  /** Publishes the whole cache once, then stops the reconciler; resolves how many Services it could not write. */
  publishOnce(): Promise<number>;
  /** No more beats, then no more writes. */
  stop(): Promise<void>;
}

/**
 * The publish side of the sync over one cluster's cache and writer: the reconciler (translation by
 * translate/exposure.ts, the safety valve in front of every write) and the heartbeat that makes routers see
 * the cluster. Live mode, `--from DIR` and `npm start` all publish through it.
 *
 * @example
 * const pipeline = createPublishPipeline({ cache, writer, valve: config.valve, holder: config.identity,
 *   leaseMs: config.leaseMs, logger, metrics });
 * if ((await pipeline.publishOnce()) === 0) pipeline.heartbeat.start();
 * await pipeline.stop();
 */
export function createPublishPipeline(options: PublishPipelineOptions): PublishPipeline {
  const { writer, logger, metrics } = options;
  const reconciler = new Reconciler({
    cache: options.cache,
    writer,
    cluster: writer.cluster,
    routeSettings: options.routeSettings,
    tlsStoreKey: options.tlsStoreKey,
    onDesired: options.onDesired,
    valve: new SafetyValve(options.valve),
    logger,
    metrics,
    ...options.timing,
  });
  const repushBeforeBeating = () => heartbeat.holdUntil(reconciler.fullResync());
  const heartbeat = new Heartbeat({
    writer,
    holder: options.holder,
    leaseMs: options.leaseMs,
    intervalMs: options.heartbeatMs,
    logger,
    metrics,
    ...(options.unreachableSince ? { unreachableSince: options.unreachableSince } : {}),
    storedServices: () => reconciler.storedServices,
    ...(options.repushWhenStoreLost ? { onStoreLost: repushBeforeBeating } : {}),
  });
  return {
    reconciler,
    heartbeat,
    repushBeforeBeating,
    async publishOnce() {
      await reconciler.enable();
      const pending = reconciler.pending;
      await reconciler.stop();
      return pending;
    },
    async stop() {
      await heartbeat.stop();
      await reconciler.stop();
    },
  };
}
