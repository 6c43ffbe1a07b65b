import { exponentialDelay } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import { redisFailureFields } from "../../store/redis/connection-problems.js";
import type { ClusterWriter } from "../../store/store.js";
import type { SyncMetrics } from "../metrics.js";
import type { RouteSettings } from "../translate/desired-routes.js";
import type { ClusterCache } from "../translate/types.js";
import type { DesiredState } from "./desired-state.js";
import { PublishPass } from "./publish-pass.js";
import type { SafetyValve } from "./safety-valve.js";
import { realTimers, type Timers } from "./timers.js";

export interface ReconcilerOptions {
  readonly cache: ClusterCache;
  readonly writer: ClusterWriter;
  readonly cluster: string;
  /** Controller names, HOST_CLAIMS and the Ingress load balancer status; the defaults when left out. */
  readonly routeSettings?: RouteSettings;
  readonly valve: SafetyValve;
  /** Each new desired state while publishing: for the status writer (the leader writes object status). */
  readonly onDesired?: ((desired: DesiredState) => void) | undefined;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
  /** Quiet time that closes a burst of events (50 ms is plenty: one rollout step fires several events). */
  readonly debounceMs?: number;
  /**
   * A constant stream of events still flushes at least this often. The debounce is shared by all Services,
   * so under steady churn (100 changes/s across a cluster) it never sees a quiet gap: this bound is what the
   * change latency becomes (its p99 is this bound plus the write; `npm run bench -- --only convergence`).
   */
  readonly maxWaitMs?: number;
  /** Backoff after a failed store write or load: base doubles per failure up to max. */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  readonly now?: () => number;
  readonly timers?: Timers;
  /** TLS_STORE_KEY (publish-pass.ts). */
  readonly tlsStoreKey?: Uint8Array | undefined;
}

export interface Reconciler {
  /**
   * A Service or one of its slices changed: recompute it after the debounce. `receivedAt`: when the watch
   * event behind it arrived, for the event-to-published latency (the earliest pending one counts).
   */
  markDirty(namespace: string, name: string, receivedAt?: number): void;
  /**
   * A route-relevant object changed (a Service, a Gateway API object, a Namespace, an IngressClass or an
   * Ingress): recompute every route after the debounce, and the Services whose referenced ports changed.
   */
  markRoutesDirty(receivedAt?: number): void;
  /** The desired state last computed (undefined before the first cycle). */
  readonly desired: DesiredState | undefined;
  /** The Service records the store holds as far as this reconciler wrote or read them; undefined before. */
  readonly storedServices: number | undefined;
  /**
   * Compares the whole cache with the store: re-pushes what differs (a Redis that restarted empty gets
   * everything back) and removes what the store holds but the cache no longer exposes (leftovers of a
   * previous run). Resolves once the store holds the whole state: a pass that failed part-way is retried
   * after its backoff and the promise waits for it. It also resolves when publishing stops (disable, stop).
   */
  fullResync(): Promise<void>;
  /** Start publishing (after the first full sync, while leading). Begins with a full resync. */
  enable(): Promise<void>;
  /** Stop publishing (leadership lost); waits for an in-flight write. */
  disable(): Promise<void>;
  readonly enabled: boolean;
  /** Publishes everything pending now, skipping the debounce (graceful shutdown). */
  flush(): Promise<void>;
  /** Services waiting to be reconciled, plus one while routes wait. */
  readonly pending: number;
  /** What waits to be published: how many Services, and whether routes do. */
  readonly unpublished: Unpublished;
  /** Cancels every timer; the reconciler does nothing afterwards. */
  stop(): Promise<void>;
}

export interface Unpublished {
  readonly services: number;
  readonly routes: boolean;
}

/**
 * The publisher: turns "this Service changed" and "a route object changed" into at most one store write per
 * record per burst. Each cycle recomputes the routes when a route-relevant object changed (whole: desired-
 * state.ts), then writes in an order that never shows a router a route without the service port it needs:
 * routes whose backends are all stored already, then the dirty Services (each with the ports both the desired
 * and the stored routes reference), then the other routes, then route removals, then the Services whose
 * referenced ports those writes changed. Writes run one at a time; a failed one is retried with backoff.
 */
export function createReconciler(options: ReconcilerOptions): Reconciler {
  const { cache, writer, cluster, logger, metrics } = options;
  const debounceMs = options.debounceMs ?? 50;
  const maxWaitMs = options.maxWaitMs ?? 100;
  const retryBaseMs = options.retryBaseMs ?? 200;
  const retryMaxMs = options.retryMaxMs ?? 10_000;
  const now = options.now ?? Date.now;
  const timers = options.timers ?? realTimers;

  const pass = new PublishPass({
    cache,
    writer,
    cluster,
    routeSettings: options.routeSettings,
    valve: options.valve,
    onDesired: options.onDesired,
    onHoldOver: (namespace, name) => markDirty(namespace, name),
    logger,
    metrics,
    now,
    timers,
    tlsStoreKey: options.tlsStoreKey,
  });
  let enabled = false;
  let stopped = false;
  let firstDirtyAt: number | undefined;
  let timer: unknown;
  let failures = 0;
  let retryNotBefore = 0;
  let running: Promise<void> | undefined;
  /** The last cycle ran its whole batch (or had nothing to do) without a store error. */
  let lastCycleComplete = false;
  /** Resolved at the end of every cycle, and when publishing stops. */
  let cycleWaiters: (() => void)[] = [];
  const wakeCycleWaiters = () => {
    const waiters = cycleWaiters;
    cycleWaiters = [];
    for (const wake of waiters) wake();
  };
  const nextCycle = () => new Promise<void>((resolve) => cycleWaiters.push(resolve));

  // Before the store was first read nothing was compared: every Service of the cache waits, and the routes.
  const unpublished = (): Unpublished =>
    enabled && !pass.loaded ? { services: cache.services().length, routes: true } : pass.unpublished;

  const schedule = () => {
    if (stopped || !enabled || pass.idle) return;
    const at = now();
    firstDirtyAt ??= at;
    // Each event restarts the quiet period, but never past max-wait from the burst's first event; after
    // a failure nothing runs before the backoff is over.
    const due = Math.max(Math.min(at + debounceMs, firstDirtyAt + maxWaitMs), retryNotBefore);
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = timers.setTimeout(
      () => {
        timer = undefined;
        void run();
      },
      Math.max(0, due - at),
    );
  };

  const run = (): Promise<void> => {
    if (running) return running;
    running = (async () => {
      try {
        await cycle();
      } finally {
        running = undefined;
        metrics.set("dirtyServices", pass.dirtyServices);
        wakeCycleWaiters();
      }
      schedule();
    })();
    return running;
  };

  const cycle = async () => {
    lastCycleComplete = false;
    if (!enabled || stopped) return;
    firstDirtyAt = undefined;
    const result = await pass.run(() => enabled && !stopped);
    if (result.kind === "failed") failed(result.what, result.error);
    if (result.kind !== "done") return;
    if (failures > 0) logger.info("store writes resumed", { cluster, failures });
    failures = 0;
    retryNotBefore = 0;
    lastCycleComplete = true;
  };

  const failed = (what: string, error: unknown) => {
    failures++;
    metrics.count("writeErrors");
    const delay = exponentialDelay(failures - 1, { initialMs: retryBaseMs, maxMs: retryMaxMs });
    retryNotBefore = now() + delay;
    // Once per outage at warn (the Redis client's report says why at error level); each retry at debug.
    const fields = { cluster, what, ...redisFailureFields(error), retryInMs: delay, failures };
    if (failures === 1) logger.warn("store write failed; retrying", fields);
    else logger.debug("store write failed again; retrying", fields);
  };

  const markDirty = (namespace: string, name: string, receivedAt?: number) => {
    if (stopped) return;
    metrics.count("events");
    pass.markService(`${namespace}/${name}`, receivedAt);
    metrics.set("dirtyServices", pass.dirtyServices);
    schedule();
  };

  const markRoutesDirty = (receivedAt?: number) => {
    if (stopped) return;
    pass.markRoutes(receivedAt);
    schedule();
  };

  const cancelTimer = () => {
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = undefined;
  };

  return {
    markDirty,
    markRoutesDirty,
    get storedServices() {
      return pass.storedServices;
    },
    get desired() {
      return pass.desired;
    },
    async fullResync() {
      if (stopped) return;
      if (running) await running;
      pass.reload();
      cancelTimer();
      await run();
      // A failed pass left the rest dirty (and the store possibly unloaded) with a retry scheduled.
      while (!lastCycleComplete && enabled && !stopped) await nextCycle();
    },
    async enable() {
      if (stopped) return;
      enabled = true;
      failures = 0;
      retryNotBefore = 0;
      // Another replica may have written while this one was not publishing: start from what the store holds.
      pass.reload();
      cancelTimer();
      await run();
    },
    async disable() {
      enabled = false;
      cancelTimer();
      if (running) await running;
      wakeCycleWaiters();
    },
    get enabled() {
      return enabled;
    },
    async flush() {
      if (running) await running;
      cancelTimer();
      retryNotBefore = 0;
      await run();
    },
    get pending() {
      const { services, routes } = unpublished();
      return services + (routes ? 1 : 0);
    },
    get unpublished() {
      return unpublished();
    },
    async stop() {
      stopped = true;
      cancelTimer();
      pass.stop();
      if (running) await running;
      wakeCycleWaiters();
    },
  };
}
