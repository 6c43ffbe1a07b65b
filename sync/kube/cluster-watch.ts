export type { ClusterWatch, ClusterWatchHealth, ClusterWatchOptions } from "./cluster-watch-types.js";

import type { Logger } from "../../lib/logger.js";
import { createWarnOnce } from "../../lib/warn-once.js";
import { ClusterIndex, type ServiceRef } from "./cluster-index.js";
import type { ClusterWatch, ClusterWatchHealth, ClusterWatchOptions } from "./cluster-watch-types.js";
import { collectionPath, KINDS, ROUTE_KINDS, type RouteKind, watchedPath } from "./kinds.js";
import { createKubeApi } from "./kube-api.js";
import { OptionalKinds } from "./optional-kinds.js";
import { createReachability } from "./reachability.js";
import { ListWatchReflector } from "./reflector.js";
import type { Reflector, ReflectorTarget, ReflectorTuning } from "./reflector-types.js";
import { RouteObjectIndex } from "./route-object-index.js";

/**
 * Watches Services and EndpointSlices (discovery.k8s.io/v1) of one cluster with reflectors (reflector.ts:
 * paged LIST, then WATCH resumed from the last resourceVersion) that feed the one validated cache the
 * reconciler reads (cluster-index.ts). An object that fails validation is logged and left out; everything
 * else keeps flowing.
 *
 * @example
 * const watch = createClusterWatch({ kubeConfig, namespaces, logger,
 *   onServiceChanged: (namespace, name, receivedAt) => reconciler.markDirty(namespace, name, receivedAt) });
 * await watch.start();   // once the first full LIST of Services AND EndpointSlices has synced
 * watch.slicesOf("shop", "web");
 * await watch.stop();    // a start() still pending rejects with "stopped before the first sync"
 */
export function createClusterWatch(options: ClusterWatchOptions): ClusterWatch {
  return new KubeClusterWatch(options);
}

/**
 * The cluster watch (see createClusterWatch): its reflectors, one Service/EndpointSlice pair per watched
 * namespace and one per route kind and scope, built once; the caches they feed (ClusterIndex for Services and
 * slices, RouteObjectIndex for the route kinds); and, once started, the resync timer and a pending start().
 */
export class KubeClusterWatch implements ClusterWatch {
  readonly #options: ClusterWatchOptions;
  readonly #logger: Logger;
  readonly #index: ClusterIndex;
  readonly #routeIndex = new RouteObjectIndex();
  /** The watched namespaces, or [undefined] for all of them. */
  readonly #scopes: readonly (string | undefined)[];
  readonly #informers: Reflector[] = [];
  readonly #now: () => number;
  readonly #forbiddenReportMs: number;
  #resyncTimer: NodeJS.Timeout | undefined;
  /** Rejects the start() still waiting for the first sync, when stop() comes first. */
  #rejectStart: ((error: Error) => void) | undefined;

  constructor(options: ClusterWatchOptions) {
    const logger = options.logger;
    this.#options = options;
    this.#logger = logger;
    this.#index = new ClusterIndex(createWarnOnce(logger));
    this.#now = options.now ?? Date.now;
    this.#forbiddenReportMs = options.forbiddenReportMs ?? 10_000;
    this.#scopes = options.namespaces && options.namespaces.length > 0 ? options.namespaces : [undefined];
    const tuning = this.#tuning();
    for (const namespace of this.#scopes) this.#informers.push(...this.#serviceReflectors(namespace, tuning));
    if (options.routeKinds ?? true) this.#informers.push(...this.#routeReflectors(tuning));
  }

  services() {
    return this.#index.services();
  }
  service(namespace: string, name: string) {
    return this.#index.service(namespace, name);
  }
  slicesOf(namespace: string, serviceName: string) {
    return this.#index.slicesOf(namespace, serviceName);
  }
  routeObjects() {
    return this.#routeIndex.objects();
  }
  routeObject(kind: RouteKind, namespace: string | undefined, name: string): object | undefined {
    return this.#routeIndex.get(kind, namespace, name);
  }

  get synced(): boolean {
    return this.#informers.every((informer) => informer.settled);
  }

  health(): ClusterWatchHealth {
    const informers = this.#informers;
    const times = informers.map((informer) => informer.lastEventAt).filter((at): at is number => at !== null);
    return {
      synced: this.synced,
      lastEventAt: times.length > 0 ? Math.max(...times) : null,
      restarts: informers.reduce((sum, informer) => sum + informer.restarts, 0),
      refused: informers
        .filter((informer) => {
          const since = informer.forbiddenSince;
          return since !== undefined && this.#now() - since >= this.#forbiddenReportMs;
        })
        .map((informer) => informer.label),
      missing: informers.filter((informer) => informer.missing).map((informer) => informer.label),
    };
  }

  async start(): Promise<void> {
    const stopped = new Promise<never>((_, reject) => {
      this.#rejectStart = reject;
    });
    for (const informer of this.#informers) informer.start();
    const resyncIntervalMs = this.#options.resyncIntervalMs ?? 300_000;
    if (resyncIntervalMs > 0) this.#resyncTimer = setInterval(() => this.#resync(), resyncIntervalMs);
    await Promise.race([Promise.all(this.#informers.map((informer) => informer.whenSettled)), stopped]);
    this.#rejectStart = undefined;
    this.#logger.info("informers synced", {
      services: this.#index.services().length,
      namespaces: this.#scopes.length,
    });
  }

  async stop(): Promise<void> {
    if (this.#resyncTimer) clearInterval(this.#resyncTimer);
    this.#resyncTimer = undefined;
    await Promise.all(this.#informers.map((informer) => informer.stop()));
    this.#rejectStart?.(new Error("cluster watch stopped before the first sync"));
    this.#rejectStart = undefined;
  }

  #resync(): void {
    if (!this.synced) return;
    this.#safely("onResync", () => this.#options.onResync?.());
  }

  /** How every reflector runs; a failure is also told to onError (for metrics). */
  #tuning(): ReflectorTuning {
    const options = this.#options;
    const logger = this.#logger;
    return {
      api: options.api ?? createKubeApi(options.kubeConfig),
      logger,
      reachability: options.reachability ?? createReachability({ logger, now: options.now }),
      watchTimeoutSeconds: options.watchTimeoutSeconds,
      stallGraceMs: options.stallGraceMs,
      retry: options.retry,
      forbiddenReportMs: this.#forbiddenReportMs,
      pageSize: options.pageSize,
      random: options.random,
      now: options.now,
      observer: {
        ...options.observer,
        failed: (resource: string, error: unknown) => {
          options.observer?.failed?.(resource, error);
          this.#safely("onError", () => options.onError?.(error));
        },
      },
    };
  }

  #serviceReflectors(namespace: string | undefined, tuning: ReflectorTuning): Reflector[] {
    const scopeLabel = namespace ?? "all namespaces";
    const index = this.#index;
    const logger = this.#logger;
    const services: ReflectorTarget = {
      label: `services (${scopeLabel})`,
      resource: "services",
      path: collectionPath("Service", namespace),
      onUpsert: (object, at) => {
        this.#servicesChanged(index.upsertService(object, logger), at);
        this.#routesChanged(true, at);
      },
      onDelete: (object, at) => {
        this.#servicesChanged(index.deleteService(object), at);
        this.#routesChanged(true, at);
      },
    };
    const slices: ReflectorTarget = {
      label: `endpointslices (${scopeLabel})`,
      resource: "endpointslices",
      path: collectionPath("EndpointSlice", namespace),
      onUpsert: (object, at) => this.#servicesChanged(index.upsertSlice(object, logger), at),
      onDelete: (object, at) => this.#servicesChanged(index.deleteSlice(object), at),
    };
    return [new ListWatchReflector(services, tuning), new ListWatchReflector(slices, tuning)];
  }

  /** One reflector per route kind: per watched namespace for a namespaced kind, else one for the cluster. */
  #routeReflectors(tuning: ReflectorTuning): Reflector[] {
    const optional = new OptionalKinds({
      logger: this.#logger,
      retryMs: this.#options.missingKindRetryMs ?? 30_000,
      namespaced: this.#scopes[0] !== undefined,
      observer: this.#options.observer,
    });
    const reflector = (kind: RouteKind, namespace: string | undefined) => {
      const { resource, namespaced } = KINDS[kind];
      const label = `${resource} (${namespace ?? (namespaced ? "all namespaces" : "cluster")})`;
      const target: ReflectorTarget = {
        label,
        resource,
        path: watchedPath(kind, namespace),
        onUpsert: (object, at) =>
          this.#routesChanged(this.#routeIndex.upsert(kind, object, this.#logger), at),
        onDelete: (object, at) => this.#routesChanged(this.#routeIndex.delete(kind, object), at),
        optional: optional.forKind(kind, label),
      };
      return new ListWatchReflector(target, tuning);
    };
    return ROUTE_KINDS.flatMap((kind) =>
      KINDS[kind].namespaced
        ? this.#scopes.map((namespace) => reflector(kind, namespace))
        : [reflector(kind, undefined)],
    );
  }

  #servicesChanged(changed: readonly ServiceRef[], receivedAt: number): void {
    for (const ref of changed) {
      try {
        this.#options.onServiceChanged(ref.namespace, ref.name, receivedAt);
      } catch (error) {
        this.#logger.error("onServiceChanged threw", { namespace: ref.namespace, service: ref.name, error });
      }
    }
  }

  #routesChanged(changed: boolean, receivedAt: number): void {
    if (changed) this.#safely("onRoutesChanged", () => this.#options.onRoutesChanged?.(receivedAt));
  }

  #safely(label: string, callback: () => void): void {
    try {
      callback();
    } catch (error) {
      this.#logger.error(`${label} threw`, { error });
    }
  }
}
