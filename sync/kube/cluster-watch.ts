import { CoreV1Api, DiscoveryV1Api } from "@kubernetes/client-node";
import type { ClusterCache } from "../translate/types.js";
import { ClusterIndex, type ServiceRef } from "./cluster-index.js";
import { type InformerTuning, type SupervisedInformer, superviseInformer } from "./informer.js";

export interface ClusterWatchOptions extends InformerTuning {
  /** undefined or [] = all namespaces; otherwise one informer pair per namespace (WATCH_NAMESPACES). */
  readonly namespaces?: readonly string[] | undefined;
  /**
   * After the cache changed for a Service or one of its slices (fired for the initial LIST too). A slice
   * relabelled to another Service, or deleted, fires for the old Service too.
   */
  readonly onServiceChanged: (namespace: string, name: string) => void;
  /** Every resyncIntervalMs once synced: recompute everything. */
  readonly onResync?: (() => void) | undefined;
  /** 5 min by default, 0 = off. */
  readonly resyncIntervalMs?: number | undefined;
}

export interface ClusterWatchHealth {
  /** The first full LIST of every informer has been applied. */
  readonly synced: boolean;
  /** Last list result, watch event or bookmark (epoch ms), null before any. */
  readonly lastEventAt: number | null;
  /** Informer restarts after errors or a stalled watch. */
  readonly restarts: number;
}

export interface ClusterWatch extends ClusterCache {
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly synced: boolean;
  /** For /readyz and /metrics. */
  health(): ClusterWatchHealth;
}

/**
 * Watches Services and EndpointSlices (discovery.k8s.io/v1) of one cluster with client-node's real
 * informers (ListWatch, kept alive by informer.ts) and keeps the validated cache the reconciler reads
 * (cluster-index.ts). An object that fails validation is logged and left out; everything else keeps flowing.
 *
 * @example
 * const watch = createClusterWatch({ kubeConfig, namespaces, logger, onServiceChanged: reconciler.markDirty });
 * await watch.start();   // once the first full LIST of Services AND EndpointSlices has synced
 * watch.slicesOf("shop", "web");
 * await watch.stop();    // a start() still pending rejects with "stopped before the first sync"
 */
export function createClusterWatch(options: ClusterWatchOptions): ClusterWatch {
  const logger = options.logger;
  const index = new ClusterIndex();
  const notify = (changed: readonly ServiceRef[]) => {
    for (const ref of changed) {
      try {
        options.onServiceChanged(ref.namespace, ref.name);
      } catch (error) {
        logger.error("onServiceChanged threw", { namespace: ref.namespace, service: ref.name, error });
      }
    }
  };
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  const discovery = options.kubeConfig.makeApiClient(DiscoveryV1Api);
  const scopes: readonly (string | undefined)[] =
    options.namespaces && options.namespaces.length > 0 ? options.namespaces : [undefined];

  const informers: SupervisedInformer[] = [];
  for (const namespace of scopes) {
    const where = namespace === undefined ? "" : `/namespaces/${encodeURIComponent(namespace)}`;
    const scopeLabel = namespace ?? "all namespaces";
    informers.push(
      superviseInformer(
        {
          label: `services (${scopeLabel})`,
          path: `/api/v1${where}/services`,
          list: () =>
            namespace === undefined
              ? core.listServiceForAllNamespaces()
              : core.listNamespacedService({ namespace }),
          onUpsert: (object) => notify(index.upsertService(object, logger)),
          onDelete: (object) => notify(index.deleteService(object)),
        },
        options,
      ),
      superviseInformer(
        {
          label: `endpointslices (${scopeLabel})`,
          path: `/apis/discovery.k8s.io/v1${where}/endpointslices`,
          list: () =>
            namespace === undefined
              ? discovery.listEndpointSliceForAllNamespaces()
              : discovery.listNamespacedEndpointSlice({ namespace }),
          onUpsert: (object) => notify(index.upsertSlice(object, logger)),
          onDelete: (object) => notify(index.deleteSlice(object)),
        },
        options,
      ),
    );
  }

  let resyncTimer: NodeJS.Timeout | undefined;
  let rejectStart: ((error: Error) => void) | undefined;
  const allSynced = () => informers.every((informer) => informer.synced);

  return {
    services: () => index.services(),
    service: (namespace, name) => index.service(namespace, name),
    slicesOf: (namespace, serviceName) => index.slicesOf(namespace, serviceName),
    get synced() {
      return allSynced();
    },
    health() {
      const times = informers
        .map((informer) => informer.lastEventAt)
        .filter((at): at is number => at !== null);
      return {
        synced: allSynced(),
        lastEventAt: times.length > 0 ? Math.max(...times) : null,
        restarts: informers.reduce((sum, informer) => sum + informer.restarts, 0),
      };
    },
    async start() {
      const stopped = new Promise<never>((_, reject) => {
        rejectStart = reject;
      });
      for (const informer of informers) informer.start();
      const resyncIntervalMs = options.resyncIntervalMs ?? 300_000;
      if (resyncIntervalMs > 0) {
        resyncTimer = setInterval(() => {
          if (!allSynced()) return;
          try {
            options.onResync?.();
          } catch (error) {
            logger.error("onResync threw", { error });
          }
        }, resyncIntervalMs);
      }
      await Promise.race([Promise.all(informers.map((informer) => informer.whenSynced)), stopped]);
      rejectStart = undefined;
      logger.info("informers synced", { services: index.services().length, namespaces: scopes.length });
    },
    async stop() {
      if (resyncTimer) clearInterval(resyncTimer);
      resyncTimer = undefined;
      await Promise.all(informers.map((informer) => informer.stop()));
      rejectStart?.(new Error("cluster watch stopped before the first sync"));
      rejectStart = undefined;
    },
  };
}
