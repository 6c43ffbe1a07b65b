import {
  CoreV1Api,
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
  Watch,
} from "@kubernetes/client-node";
import { type BackoffPolicy, createBackoff } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import {
  type KubeEndpointSlice,
  type KubeService,
  namespaceOf,
  parseEndpointSlice,
  parseService,
  SERVICE_NAME_LABEL,
} from "../translate/kube-objects.js";
import type { ClusterCache } from "../translate/types.js";

/**
 * Watches Services and EndpointSlices (discovery.k8s.io/v1) of one cluster with client-node's real
 * informers (ListWatch) and keeps a validated cache the reconciler reads (ClusterCache).
 *
 * Usage (sync/main.ts):
 *   const watch = createClusterWatch({ kubeConfig, namespaces, logger, onServiceChanged: (ns, name) => ... });
 *   await watch.start();   // resolves once the first full LIST of Services AND EndpointSlices has synced
 *   watch.services(); watch.service(ns, name); watch.slicesOf(ns, serviceName);   // ClusterCache
 *   watch.health();        // { synced, lastEventAt, restarts } for /readyz and /metrics
 *   await watch.stop();    // start() still pending then rejects with "stopped before the first sync"
 *
 * Options:
 * - kubeConfig: client-node KubeConfig (in-cluster or from a file; only the entry file builds it).
 * - namespaces: undefined or [] = all namespaces; otherwise one informer pair per namespace (WATCH_NAMESPACES).
 * - onServiceChanged(namespace, name): after the cache changed for a Service or one of its slices (fired for
 *   the initial LIST too). A slice relabelled to another Service, or deleted, fires for the old Service too.
 * - onResync(): every resyncIntervalMs (default 5 min, 0 = off) once synced: recompute everything.
 * - onError(error): every list/watch failure (the informer is restarted by itself; this is for metrics).
 * - backoff {initialMs, maxMs} (default 500 ms .. 30 s), capped exponential with full jitter, reset once a
 *   watch connects again. random (default Math.random), now (default Date.now).
 * - watchdogMs (default 150 s): no event, bookmark or (re)connection for that long restarts the informer
 *   (a half-dead connection never errors). Watches ask for bookmarks, so keep it above the server's bookmark
 *   interval (kube-apiserver sends one about every minute).
 * - watchTimeoutSeconds (default 300): the server ends each watch after 1-2x this (client-go does the same),
 *   and client-node resumes it from the last resourceVersion.
 *
 * Faults: client-node's ListWatch stops on any list/watch error; here it is restarted with backoff and resumes
 * from its last resourceVersion. A 410 Gone (HTTP status or ERROR event on the stream) makes ListWatch drop its
 * resourceVersion and LIST again; a 410 on the LIST itself arrives as an error and the restart lists again.
 * On a relist, objects gone from the server fire deletes. An object that fails validation is logged with its
 * namespace/name and left out of the cache; everything else keeps flowing.
 */
export interface ClusterWatchOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespaces?: readonly string[] | undefined;
  readonly onServiceChanged: (namespace: string, name: string) => void;
  readonly onResync?: (() => void) | undefined;
  readonly onError?: ((error: unknown) => void) | undefined;
  readonly logger: Logger;
  readonly backoff?: BackoffPolicy | undefined;
  readonly resyncIntervalMs?: number | undefined;
  readonly watchdogMs?: number | undefined;
  readonly watchTimeoutSeconds?: number | undefined;
  readonly random?: (() => number) | undefined;
  readonly now?: (() => number) | undefined;
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
  health(): ClusterWatchHealth;
}

const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };

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
      superviseInformer({
        label: `services (${scopeLabel})`,
        path: `/api/v1${where}/services`,
        list: () =>
          namespace === undefined
            ? core.listServiceForAllNamespaces()
            : core.listNamespacedService({ namespace }),
        onUpsert: (object) => notify(index.upsertService(object, logger)),
        onDelete: (object) => notify(index.deleteService(object)),
        options,
      }),
      superviseInformer({
        label: `endpointslices (${scopeLabel})`,
        path: `/apis/discovery.k8s.io/v1${where}/endpointslices`,
        list: () =>
          namespace === undefined
            ? discovery.listEndpointSliceForAllNamespaces()
            : discovery.listNamespacedEndpointSlice({ namespace }),
        onUpsert: (object) => notify(index.upsertSlice(object, logger)),
        onDelete: (object) => notify(index.deleteSlice(object)),
        options,
      }),
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

interface ServiceRef {
  readonly namespace: string;
  readonly name: string;
}

/** The validated cache, with slices indexed by (namespace, kubernetes.io/service-name). */
class ClusterIndex {
  private readonly servicesByKey = new Map<string, KubeService>();
  private readonly slicesByKey = new Map<
    string,
    { slice: KubeEndpointSlice; owner: ServiceRef | undefined }
  >();
  private readonly sliceKeysByService = new Map<string, Set<string>>();

  services(): readonly KubeService[] {
    return [...this.servicesByKey.values()];
  }

  service(namespace: string, name: string): KubeService | undefined {
    return this.servicesByKey.get(refKey({ namespace, name }));
  }

  slicesOf(namespace: string, serviceName: string): readonly KubeEndpointSlice[] {
    const keys = this.sliceKeysByService.get(refKey({ namespace, name: serviceName }));
    if (!keys) return [];
    const slices: KubeEndpointSlice[] = [];
    for (const key of keys) {
      const entry = this.slicesByKey.get(key);
      if (entry) slices.push(entry.slice);
    }
    return slices;
  }

  upsertService(raw: unknown, logger: Logger): ServiceRef[] {
    const ref = identify(raw);
    if (!ref) return invalidIdentity("Service", raw, logger);
    const parsed = parseService(raw);
    if (!parsed.ok) {
      logger.warn("skipping invalid Service", {
        namespace: ref.namespace,
        name: ref.name,
        error: parsed.error,
      });
      // A Service that turned invalid leaves the cache: the reconciler sees it gone, as for a delete.
      return this.servicesByKey.delete(refKey(ref)) ? [ref] : [];
    }
    this.servicesByKey.set(refKey(ref), parsed.value);
    return [ref];
  }

  deleteService(raw: unknown): ServiceRef[] {
    const ref = identify(raw);
    if (!ref) return [];
    this.servicesByKey.delete(refKey(ref));
    return [ref];
  }

  upsertSlice(raw: unknown, logger: Logger): ServiceRef[] {
    const ref = identify(raw);
    if (!ref) return invalidIdentity("EndpointSlice", raw, logger);
    const parsed = parseEndpointSlice(raw);
    if (!parsed.ok) {
      logger.warn("skipping invalid EndpointSlice", {
        namespace: ref.namespace,
        name: ref.name,
        error: parsed.error,
      });
      return this.forgetSlice(ref);
    }
    const slice = parsed.value;
    const serviceName = slice.metadata.labels?.[SERVICE_NAME_LABEL];
    const owner = serviceName ? { namespace: ref.namespace, name: serviceName } : undefined;
    const previous = this.forgetSlice(ref);
    const key = refKey(ref);
    this.slicesByKey.set(key, { slice, owner });
    if (owner) {
      const ownerKey = refKey(owner);
      const keys = this.sliceKeysByService.get(ownerKey) ?? new Set<string>();
      keys.add(key);
      this.sliceKeysByService.set(ownerKey, keys);
    }
    return uniqueRefs([...previous, ...(owner ? [owner] : [])]);
  }

  deleteSlice(raw: unknown): ServiceRef[] {
    const ref = identify(raw);
    if (!ref) return [];
    const labelled = labelOf(raw, SERVICE_NAME_LABEL);
    const fromLabel = labelled ? [{ namespace: ref.namespace, name: labelled }] : [];
    return uniqueRefs([...this.forgetSlice(ref), ...fromLabel]);
  }

  /** Removes a slice; returns the Service it belonged to, if any. */
  private forgetSlice(ref: ServiceRef): ServiceRef[] {
    const key = refKey(ref);
    const entry = this.slicesByKey.get(key);
    if (!entry) return [];
    this.slicesByKey.delete(key);
    if (!entry.owner) return [];
    const ownerKey = refKey(entry.owner);
    const keys = this.sliceKeysByService.get(ownerKey);
    keys?.delete(key);
    if (keys && keys.size === 0) this.sliceKeysByService.delete(ownerKey);
    return [entry.owner];
  }
}

function refKey(ref: ServiceRef): string {
  return `${ref.namespace}/${ref.name}`;
}

function uniqueRefs(refs: readonly ServiceRef[]): ServiceRef[] {
  const seen = new Map<string, ServiceRef>();
  for (const ref of refs) seen.set(refKey(ref), ref);
  return [...seen.values()];
}

function metadataOf(raw: unknown): Record<string, unknown> | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const metadata = (raw as { metadata?: unknown }).metadata;
  return typeof metadata === "object" && metadata !== null
    ? (metadata as Record<string, unknown>)
    : undefined;
}

function identify(raw: unknown): ServiceRef | undefined {
  const metadata = metadataOf(raw);
  const name = metadata?.name;
  if (typeof name !== "string" || name === "") return undefined;
  const namespace = typeof metadata?.namespace === "string" ? metadata.namespace : undefined;
  return { namespace: namespaceOf({ metadata: { namespace: namespace ?? null } }), name };
}

function labelOf(raw: unknown, label: string): string | undefined {
  const labels = metadataOf(raw)?.labels;
  if (typeof labels !== "object" || labels === null) return undefined;
  const value = (labels as Record<string, unknown>)[label];
  return typeof value === "string" && value !== "" ? value : undefined;
}

function invalidIdentity(kind: string, raw: unknown, logger: Logger): ServiceRef[] {
  logger.warn(`skipping ${kind} without metadata.name`, { object: JSON.stringify(raw)?.slice(0, 200) });
  return [];
}

/** One ListWatch kept alive: restarted with backoff after errors, and by a watchdog when its watch goes quiet. */
interface SupervisedInformer {
  start(): void;
  stop(): Promise<void>;
  readonly synced: boolean;
  readonly whenSynced: Promise<void>;
  readonly lastEventAt: number | null;
  readonly restarts: number;
}

/** Thrown by a LIST that finished after its informer was restarted: its result belongs to nobody. */
class StaleAttemptError extends Error {
  constructor() {
    super("list finished after its informer was restarted");
  }
}

function superviseInformer(params: {
  label: string;
  path: string;
  list: () => Promise<KubernetesListObject<KubernetesObject>>;
  onUpsert: (object: unknown) => void;
  onDelete: (object: unknown) => void;
  options: ClusterWatchOptions;
}): SupervisedInformer {
  const { options, label } = params;
  const logger = options.logger;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const backoff = createBackoff(options.backoff ?? DEFAULT_BACKOFF, random);
  const watchdogMs = options.watchdogMs ?? 150_000;
  const watchTimeoutSeconds = options.watchTimeoutSeconds ?? 300;

  let running = false;
  let synced = false;
  let lastEventAt: number | null = null;
  let lastActivityAt = now();
  let restarts = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let watchdogTimer: NodeJS.Timeout | undefined;
  let markSynced: () => void = () => {};
  const whenSynced = new Promise<void>((resolve) => {
    markSynced = resolve;
  });

  const sawActivity = () => {
    lastActivityAt = now();
    lastEventAt = lastActivityAt;
  };

  const watch = new SupervisedWatch(options.kubeConfig, {
    query: () => ({
      allowWatchBookmarks: true,
      // client-go spreads watch lifetimes over [min, 2*min) so replicas do not reconnect in lockstep.
      timeoutSeconds: Math.floor(watchTimeoutSeconds * (1 + random())),
    }),
    onWatchRequested: () => {
      // ListWatch asks for a watch only after it applied a LIST, so the first request means "synced".
      if (!synced) {
        synced = true;
        markSynced();
        logger.info("informer synced", { informer: label });
      }
    },
    onConnected: () => {
      lastActivityAt = now();
      backoff.reset();
    },
    onEvent: sawActivity,
  });

  const listFn = async () => {
    const generation = watch.generation;
    lastActivityAt = now();
    const list = await params.list();
    if (generation !== watch.generation) throw new StaleAttemptError();
    sawActivity();
    return list;
  };
  const informer = new ListWatch<KubernetesObject>(params.path, watch, listFn, false);
  informer.on("add", (object) => params.onUpsert(object));
  informer.on("update", (object) => params.onUpsert(object));
  informer.on("delete", (object) => params.onDelete(object));
  informer.on("error", (error) => onFailure(error));

  function launch(): void {
    watch.activate();
    lastActivityAt = now();
    informer.start().catch((error: unknown) => onFailure(error));
  }

  async function restart(reason: string): Promise<void> {
    if (!running) return;
    restarts += 1;
    watch.deactivate();
    await informer.stop();
    if (!running) return;
    logger.info("restarting informer", { informer: label, reason, restarts });
    launch();
  }

  function onFailure(error: unknown): void {
    if (!running || error instanceof StaleAttemptError || retryTimer) return;
    watch.deactivate();
    const status = statusOf(error);
    const delayMs = backoff.next();
    const fields = { informer: label, status, error, retryInMs: delayMs, attempt: backoff.attempts };
    if (status === 401 || status === 403) {
      logger.error(
        "informer not authorised: check the token and RBAC (list/watch services, endpointslices)",
        fields,
      );
    } else {
      logger.warn("informer failed", fields);
    }
    try {
      options.onError?.(error);
    } catch (callbackError) {
      logger.error("onError threw", { error: callbackError });
    }
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void restart(status === undefined ? "error" : `error ${status}`);
    }, delayMs);
  }

  function checkWatchdog(): void {
    if (!running || retryTimer) return;
    const quietMs = now() - lastActivityAt;
    if (quietMs <= watchdogMs) return;
    logger.warn("watch stalled: no event or bookmark, restarting", { informer: label, quietMs });
    lastActivityAt = now();
    void restart("stalled");
  }

  return {
    start() {
      if (running) return;
      running = true;
      launch();
      watchdogTimer = setInterval(checkWatchdog, Math.max(10, Math.floor(watchdogMs / 4)));
    },
    async stop() {
      running = false;
      if (retryTimer) clearTimeout(retryTimer);
      if (watchdogTimer) clearInterval(watchdogTimer);
      retryTimer = undefined;
      watchdogTimer = undefined;
      watch.deactivate();
      await informer.stop();
    },
    get synced() {
      return synced;
    },
    whenSynced,
    get lastEventAt() {
      return lastEventAt;
    },
    get restarts() {
      return restarts;
    },
  };
}

type WatchCallback = Parameters<Watch["watch"]>[2];
type WatchDone = Parameters<Watch["watch"]>[3];

/**
 * client-node's Watch with the supervision ListWatch lacks: it asks for bookmarks, reports activity, and
 * can cut off every request of an earlier generation. ListWatch keeps only the last watch's controller and
 * can start a new watch while an old request is still connecting; after `deactivate()` those late requests
 * are aborted and their callbacks ignored, so exactly one watch feeds the cache.
 */
class SupervisedWatch extends Watch {
  private currentGeneration = 0;
  private active = false;
  private readonly live = new Set<AbortController>();

  constructor(
    config: KubeConfig,
    private readonly hooks: {
      query: () => Record<string, string | number | boolean>;
      onWatchRequested: () => void;
      onConnected: () => void;
      onEvent: () => void;
    },
  ) {
    super(config);
  }

  get generation(): number {
    return this.currentGeneration;
  }

  activate(): void {
    this.active = true;
  }

  deactivate(): void {
    this.currentGeneration += 1;
    this.active = false;
    for (const controller of this.live) controller.abort();
    this.live.clear();
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    done: WatchDone,
  ): Promise<AbortController> {
    const generation = this.currentGeneration;
    if (!this.active) return abortedController();
    this.hooks.onWatchRequested();
    const current = () => generation === this.currentGeneration;
    let finished = false;
    let controller: AbortController | undefined;
    const result = await super.watch(
      path,
      { ...queryParams, ...this.hooks.query() },
      (phase, object, raw) => {
        if (!current()) return;
        this.hooks.onEvent();
        callback(phase, object, raw);
      },
      (error: unknown) => {
        finished = true;
        if (controller) this.live.delete(controller);
        if (current()) done(error);
      },
    );
    controller = result;
    if (!current()) {
      result.abort();
      return result;
    }
    if (!finished) {
      this.live.add(result);
      this.hooks.onConnected();
    }
    return result;
  }
}

function abortedController(): AbortController {
  const controller = new AbortController();
  controller.abort();
  return controller;
}

/** HTTP status of a client-node error: ApiException has `code`, Watch errors have `statusCode`. */
function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, statusCode } = error as { code?: unknown; statusCode?: unknown };
  if (typeof statusCode === "number") return statusCode;
  if (typeof code === "number") return code;
  return undefined;
}
