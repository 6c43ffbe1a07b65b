import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../../lib/logger.js";
import { createWarnOnce } from "../../lib/warn-once.js";
import type { ClusterCache } from "../translate/types.js";
import { ClusterIndex, type ServiceRef } from "./cluster-index.js";
import { collectionPath, KINDS, ROUTE_KINDS, type RouteKind, watchedPath } from "./kinds.js";
import { createKubeApi, type KubeApi } from "./kube-api.js";
import { OptionalKinds } from "./optional-kinds.js";
import { createReachability, type Reachability } from "./reachability.js";
import { ListWatchReflector } from "./reflector.js";
import type { Reflector, ReflectorTuning } from "./reflector-types.js";
import { RouteObjectIndex } from "./route-object-index.js";

/**
 * How each reflector of the watch runs (reflector-types.ts ReflectorTuning): WATCH_TIMEOUT_SECONDS,
 * WATCH_STALL_GRACE_MS, retry delays, the RBAC report bound, page size, and the relist/restart observer.
 */
type ClusterWatchTuning = Pick<
  ReflectorTuning,
  | "watchTimeoutSeconds"
  | "stallGraceMs"
  | "retry"
  | "forbiddenReportMs"
  | "pageSize"
  | "observer"
  | "random"
  | "now"
>;

export interface ClusterWatchOptions extends ClusterWatchTuning {
  readonly kubeConfig: KubeConfig;
  /** The HTTP client to use; one over kubeConfig by default. */
  readonly api?: KubeApi | undefined;
  readonly logger: Logger;
  /** Shared with leader election so every request tells whether the API server answers. */
  readonly reachability?: Reachability | undefined;
  /** undefined or [] = all namespaces; otherwise one reflector pair per namespace (WATCH_NAMESPACES). */
  readonly namespaces?: readonly string[] | undefined;
  /**
   * After the cache changed for a Service or one of its slices (fired for the initial LIST too), with when
   * the change was read from the API server. A slice relabelled to another Service, or deleted, fires for
   * the old Service too.
   */
  readonly onServiceChanged: (namespace: string, name: string, receivedAt: number) => void;
  /**
   * After the cache changed for an object routes are made of: a Service (its annotations, ports, age), a
   * Gateway API object, a Namespace, an IngressClass or an Ingress.
   */
  readonly onRoutesChanged?: ((receivedAt: number) => void) | undefined;
  /**
   * Also watch GatewayClasses, Gateways, HTTPRoutes, ReferenceGrants, Namespaces, IngressClasses and
   * Ingresses (true by default). A kind the API server does not serve (the Gateway API CRDs not installed)
   * is logged once per API group, read as empty, and listed again every missingKindRetryMs.
   */
  readonly routeKinds?: boolean | undefined;
  /** 30 s by default. */
  readonly missingKindRetryMs?: number | undefined;
  /** Every resyncIntervalMs once synced: recompute everything. */
  readonly onResync?: (() => void) | undefined;
  /** 5 min by default, 0 = off. */
  readonly resyncIntervalMs?: number | undefined;
  /** Every list/watch failure (the reflector retries by itself; this is for metrics). */
  readonly onError?: ((error: unknown) => void) | undefined;
}

export interface ClusterWatchHealth {
  /** The first full LIST of every reflector has been applied. */
  readonly synced: boolean;
  /** Last list result, watch event or bookmark (epoch ms), null before any. */
  readonly lastEventAt: number | null;
  /** Watch restarts after errors, stalls or an expired resourceVersion. */
  readonly restarts: number;
  /** Reflectors the API server has refused (401/403) for longer than forbiddenReportMs. */
  readonly refused: readonly string[];
  /** Resources the API server does not serve (their CRDs are not installed). */
  readonly missing: readonly string[];
}

export interface ClusterWatch extends ClusterCache {
  /** The cached object of a route-relevant kind (with its status), for the status writer. */
  routeObject(kind: RouteKind, namespace: string | undefined, name: string): object | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly synced: boolean;
  /** For /readyz and /metrics. */
  health(): ClusterWatchHealth;
}

/**
 * Watches Services and EndpointSlices (discovery.k8s.io/v1) of one cluster with reflectors (reflector.ts:
 * paged LIST, then WATCH resumed from the last resourceVersion) that feed the one validated cache the
 * reconciler reads (cluster-index.ts). An object that fails validation is logged and left out; everything
 * else keeps flowing.
 *
 * @example
 * const watch = createClusterWatch({ kubeConfig, namespaces, logger, onServiceChanged: reconciler.markDirty });
 * await watch.start();   // once the first full LIST of Services AND EndpointSlices has synced
 * watch.slicesOf("shop", "web");
 * await watch.stop();    // a start() still pending rejects with "stopped before the first sync"
 */
export function createClusterWatch(options: ClusterWatchOptions): ClusterWatch {
  const logger = options.logger;
  const index = new ClusterIndex(createWarnOnce(logger));
  const notify = (changed: readonly ServiceRef[], receivedAt: number) => {
    for (const ref of changed) {
      try {
        options.onServiceChanged(ref.namespace, ref.name, receivedAt);
      } catch (error) {
        logger.error("onServiceChanged threw", { namespace: ref.namespace, service: ref.name, error });
      }
    }
  };
  const api = options.api ?? createKubeApi(options.kubeConfig);
  const reachability = options.reachability ?? createReachability({ logger, now: options.now });
  const now = options.now ?? Date.now;
  const forbiddenReportMs = options.forbiddenReportMs ?? 10_000;
  const tuning: ReflectorTuning = {
    api,
    logger,
    reachability,
    watchTimeoutSeconds: options.watchTimeoutSeconds,
    stallGraceMs: options.stallGraceMs,
    retry: options.retry,
    forbiddenReportMs,
    pageSize: options.pageSize,
    random: options.random,
    now: options.now,
    observer: {
      ...options.observer,
      failed(resource: string, error: unknown) {
        options.observer?.failed?.(resource, error);
        try {
          options.onError?.(error);
        } catch (callbackError) {
          logger.error("onError threw", { error: callbackError });
        }
      },
    },
  };
  const scopes: readonly (string | undefined)[] =
    options.namespaces && options.namespaces.length > 0 ? options.namespaces : [undefined];
  const routeIndex = new RouteObjectIndex();
  const routesChanged = (changed: boolean, receivedAt: number) => {
    if (!changed) return;
    try {
      options.onRoutesChanged?.(receivedAt);
    } catch (error) {
      logger.error("onRoutesChanged threw", { error });
    }
  };
  const optional = new OptionalKinds({
    logger,
    retryMs: options.missingKindRetryMs ?? 30_000,
    namespaced: scopes[0] !== undefined,
    observer: options.observer,
  });
  const routeReflector = (kind: RouteKind, namespace: string | undefined) => {
    const label = `${KINDS[kind].resource} (${namespace ?? (KINDS[kind].namespaced ? "all namespaces" : "cluster")})`;
    return new ListWatchReflector(
      {
        label,
        resource: KINDS[kind].resource,
        path: watchedPath(kind, namespace),
        onUpsert: (object, at) => routesChanged(routeIndex.upsert(kind, object, logger), at),
        onDelete: (object, at) => routesChanged(routeIndex.delete(kind, object), at),
        optional: optional.forKind(kind, label),
      },
      tuning,
    );
  };

  const informers: Reflector[] = [];
  for (const namespace of scopes) {
    const scopeLabel = namespace ?? "all namespaces";
    informers.push(
      new ListWatchReflector(
        {
          label: `services (${scopeLabel})`,
          resource: "services",
          path: collectionPath("Service", namespace),
          onUpsert: (object, at) => {
            notify(index.upsertService(object, logger), at);
            routesChanged(true, at);
          },
          onDelete: (object, at) => {
            notify(index.deleteService(object), at);
            routesChanged(true, at);
          },
        },
        tuning,
      ),
      new ListWatchReflector(
        {
          label: `endpointslices (${scopeLabel})`,
          resource: "endpointslices",
          path: collectionPath("EndpointSlice", namespace),
          onUpsert: (object, at) => notify(index.upsertSlice(object, logger), at),
          onDelete: (object, at) => notify(index.deleteSlice(object), at),
        },
        tuning,
      ),
    );
  }

  if (options.routeKinds ?? true) {
    for (const kind of ROUTE_KINDS) {
      if (!KINDS[kind].namespaced) informers.push(routeReflector(kind, undefined));
      else for (const namespace of scopes) informers.push(routeReflector(kind, namespace));
    }
  }

  let resyncTimer: NodeJS.Timeout | undefined;
  let rejectStart: ((error: Error) => void) | undefined;
  const allSynced = () => informers.every((informer) => informer.settled);

  return {
    services: () => index.services(),
    service: (namespace, name) => index.service(namespace, name),
    slicesOf: (namespace, serviceName) => index.slicesOf(namespace, serviceName),
    routeObjects: () => routeIndex.objects(),
    routeObject: (kind, namespace, name) => routeIndex.get(kind, namespace, name),
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
        refused: informers
          .filter((informer) => {
            const since = informer.forbiddenSince;
            return since !== undefined && now() - since >= forbiddenReportMs;
          })
          .map((informer) => informer.label),
        missing: informers.filter((informer) => informer.missing).map((informer) => informer.label),
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
      await Promise.race([Promise.all(informers.map((informer) => informer.whenSettled)), stopped]);
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
