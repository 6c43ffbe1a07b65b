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
 *
 * States: disabled (marks collect, nothing runs), enabled (a timer waits for the debounce, or a cycle
 * runs), stopped (for good). Transitions: enable, disable, stop; markDirty and markRoutesDirty schedule a
 * cycle, fullResync and flush run one now; a failed cycle backs off (#failed) and the next one resumes.
 */
export class Reconciler {
  readonly #options: ReconcilerOptions;
  readonly #debounceMs: number;
  readonly #maxWaitMs: number;
  readonly #now: () => number;
  readonly #timers: Timers;
  readonly #pass: PublishPass;
  #enabled = false;
  #stopped = false;
  /** When the first event of the burst waiting for the next cycle arrived. */
  #firstDirtyAt: number | undefined;
  #timer: unknown;
  /** Failed cycles in a row; no cycle starts before retryNotBefore. */
  #failures = 0;
  #retryNotBefore = 0;
  #running: Promise<void> | undefined;
  /** The last cycle ran its whole batch (or had nothing to do) without a store error. */
  #lastCycleComplete = false;
  /** Resolved at the end of every cycle, and when publishing stops. */
  #cycleWaiters: (() => void)[] = [];

  constructor(options: ReconcilerOptions) {
    this.#options = options;
    this.#debounceMs = options.debounceMs ?? 50;
    this.#maxWaitMs = options.maxWaitMs ?? 100;
    this.#now = options.now ?? Date.now;
    this.#timers = options.timers ?? realTimers;
    this.#pass = new PublishPass({
      cache: options.cache,
      writer: options.writer,
      cluster: options.cluster,
      routeSettings: options.routeSettings,
      valve: options.valve,
      onDesired: options.onDesired,
      onHoldOver: (namespace, name) => this.markDirty(namespace, name),
      logger: options.logger,
      metrics: options.metrics,
      now: this.#now,
      timers: this.#timers,
      tlsStoreKey: options.tlsStoreKey,
    });
  }

  /**
   * A Service or one of its slices changed: recompute it after the debounce. `receivedAt`: when the watch
   * event behind it arrived, for the event-to-published latency (the earliest pending one counts).
   */
  markDirty(namespace: string, name: string, receivedAt?: number): void {
    if (this.#stopped) return;
    this.#options.metrics.count("events");
    this.#pass.markService(`${namespace}/${name}`, receivedAt);
    this.#options.metrics.set("dirtyServices", this.#pass.dirtyServices);
    this.#schedule();
  }

  /**
   * A route-relevant object changed (a Service, a Gateway API object, a Namespace, an IngressClass or an
   * Ingress): recompute every route after the debounce, and the Services whose referenced ports changed.
   */
  markRoutesDirty(receivedAt?: number): void {
    if (this.#stopped) return;
    this.#pass.markRoutes(receivedAt);
    this.#schedule();
  }

  /** The desired state last computed (undefined before the first cycle). */
  get desired(): DesiredState | undefined {
    return this.#pass.desired;
  }

  /** The Service records the store holds as far as this reconciler wrote or read them; undefined before. */
  get storedServices(): number | undefined {
    return this.#pass.storedServices;
  }

  /**
   * Compares the whole cache with the store: re-pushes what differs (a Redis that restarted empty gets
   * everything back) and removes what the store holds but the cache no longer exposes (leftovers of a
   * previous run). Resolves once the store holds the whole state: a pass that failed part-way is retried
   * after its backoff and the promise waits for it. It also resolves when publishing stops (disable, stop).
   */
  async fullResync(): Promise<void> {
    if (this.#stopped) return;
    if (this.#running) await this.#running;
    this.#pass.reload();
    this.#cancelTimer();
    await this.#run();
    // A failed pass left the rest dirty (and the store possibly unloaded) with a retry scheduled.
    while (!this.#lastCycleComplete && this.#enabled && !this.#stopped) await this.#nextCycle();
  }

  /** Start publishing (after the first full sync, while leading). Begins with a full resync. */
  async enable(): Promise<void> {
    if (this.#stopped) return;
    this.#enabled = true;
    this.#failures = 0;
    this.#retryNotBefore = 0;
    // Another replica may have written while this one was not publishing: start from what the store holds.
    this.#pass.reload();
    this.#cancelTimer();
    await this.#run();
  }

  /** Stop publishing (leadership lost); waits for an in-flight write. */
  async disable(): Promise<void> {
    this.#enabled = false;
    this.#cancelTimer();
    if (this.#running) await this.#running;
    this.#wakeCycleWaiters();
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  /** Publishes everything pending now, skipping the debounce (graceful shutdown). */
  async flush(): Promise<void> {
    if (this.#running) await this.#running;
    this.#cancelTimer();
    this.#retryNotBefore = 0;
    await this.#run();
  }

  /** Services waiting to be reconciled, plus one while routes wait. */
  get pending(): number {
    const { services, routes } = this.unpublished;
    return services + (routes ? 1 : 0);
  }

  /** What waits to be published: how many Services, and whether routes do. */
  get unpublished(): Unpublished {
    // Before the store was first read nothing was compared: every Service of the cache waits, and the routes.
    return this.#enabled && !this.#pass.loaded
      ? { services: this.#options.cache.services().length, routes: true }
      : this.#pass.unpublished;
  }

  /** Cancels every timer; the reconciler does nothing afterwards. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancelTimer();
    this.#pass.stop();
    if (this.#running) await this.#running;
    this.#wakeCycleWaiters();
  }

  #schedule(): void {
    if (this.#stopped || !this.#enabled || this.#pass.idle) return;
    const at = this.#now();
    this.#firstDirtyAt ??= at;
    // Each event restarts the quiet period, but never past max-wait from the burst's first event; after
    // a failure nothing runs before the backoff is over.
    const quietEnd = Math.min(at + this.#debounceMs, this.#firstDirtyAt + this.#maxWaitMs);
    const due = Math.max(quietEnd, this.#retryNotBefore);
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = this.#timers.setTimeout(
      () => {
        this.#timer = undefined;
        void this.#run();
      },
      Math.max(0, due - at),
    );
  }

  /** Runs a cycle, or joins the one running; schedules the next when marks arrived meanwhile. */
  #run(): Promise<void> {
    if (this.#running) return this.#running;
    this.#running = (async () => {
      try {
        await this.#cycle();
      } finally {
        this.#running = undefined;
        this.#options.metrics.set("dirtyServices", this.#pass.dirtyServices);
        this.#wakeCycleWaiters();
      }
      this.#schedule();
    })();
    return this.#running;
  }

  async #cycle(): Promise<void> {
    this.#lastCycleComplete = false;
    if (!this.#enabled || this.#stopped) return;
    this.#firstDirtyAt = undefined;
    const result = await this.#pass.run(() => this.#enabled && !this.#stopped);
    if (result.kind === "failed") this.#failed(result.what, result.error);
    if (result.kind !== "done") return;
    if (this.#failures > 0)
      this.#options.logger.info("store writes resumed", {
        cluster: this.#options.cluster,
        failures: this.#failures,
      });
    this.#failures = 0;
    this.#retryNotBefore = 0;
    this.#lastCycleComplete = true;
  }

  #failed(what: string, error: unknown): void {
    const { cluster, logger, metrics } = this.#options;
    const failures = ++this.#failures;
    metrics.count("writeErrors");
    const delay = exponentialDelay(failures - 1, {
      initialMs: this.#options.retryBaseMs ?? 200,
      maxMs: this.#options.retryMaxMs ?? 10_000,
    });
    this.#retryNotBefore = this.#now() + delay;
    // Once per outage at warn (the Redis client's report says why at error level); each retry at debug.
    const fields = { cluster, what, ...redisFailureFields(error), retryInMs: delay, failures };
    if (failures === 1) logger.warn("store write failed; retrying", fields);
    else logger.debug("store write failed again; retrying", fields);
  }

  #nextCycle(): Promise<void> {
    return new Promise<void>((resolve) => this.#cycleWaiters.push(resolve));
  }

  #wakeCycleWaiters(): void {
    const waiters = this.#cycleWaiters;
    this.#cycleWaiters = [];
    for (const wake of waiters) wake();
  }

  #cancelTimer(): void {
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
