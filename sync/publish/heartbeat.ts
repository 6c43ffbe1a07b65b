import type { Logger } from "../../lib/logger.js";
import type { ClusterWriter } from "../../store/store.js";
import type { SyncMetrics } from "../metrics.js";
import { realTimers, type Timers } from "./timers.js";

export interface HeartbeatOptions {
  readonly writer: ClusterWriter;
  readonly holder: string;
  readonly leaseMs: number;
  /** leaseMs / 3 by default: two beats may be lost before routers see the cluster as stale. */
  readonly intervalMs?: number;
  readonly logger: Logger;
  readonly metrics: SyncMetrics;
  readonly now?: () => number;
  readonly timers?: Timers;
  /**
   * Called when a beat found the heartbeat record this replica wrote gone (the beat only replaces it, never
   * creates it): the store lost the cluster's keys without a reconnect to tell (FLUSHALL, a Redis Cluster
   * master restarting empty). The caller re-pushes and passes that work to holdUntil; recreating the record
   * first would announce an empty cluster to routers.
   */
  readonly onStoreLost?: () => void;
  /** Since when the API server has not answered (epoch ms), written into each beat; undefined: it answers. */
  readonly unreachableSince?: () => number | undefined;
  /** The Service records the sync holds in the store, written into each beat for routers to compare. */
  readonly storedServices?: () => number | undefined;
}

/**
 * The cluster's heartbeat in the store: routers see a cluster, and trust its records, only while its lease
 * is fresh. One beat at start, then every interval; beats never overlap.
 *
 * States: stopped, running (a timer waits for the next beat, or a beat is in flight), held (running, but no
 * beat leaves until every holdUntil's work settled). Transitions: start, stop, beatNow, holdUntil and its
 * release, and each beat's end, which schedules the next.
 *
 * @example
 * const heartbeat = new Heartbeat({ writer, holder: config.identity, leaseMs: 15_000, logger, metrics });
 * heartbeat.start();
 * await heartbeat.stop();
 */
export class Heartbeat {
  readonly #options: HeartbeatOptions;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #timers: Timers;
  /** The timer of the next beat; undefined while a beat is in flight, while held and once stopped. */
  #timer: unknown;
  #running = false;
  #inFlight: Promise<void> | undefined;
  /** beatNow came while a beat was in flight: the next one leaves right after it. */
  #beatAgain = false;
  /** holdUntil calls whose work has not settled yet. */
  #holds = 0;
  /** A beat landed since the last hold: the heartbeat record should be in the store. */
  #announced = false;

  constructor(options: HeartbeatOptions) {
    this.#options = options;
    this.#intervalMs = options.intervalMs ?? Math.max(1, Math.floor(options.leaseMs / 3));
    this.#now = options.now ?? Date.now;
    this.#timers = options.timers ?? realTimers;
  }

  /** Beats now and then every interval (while leading). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#tick();
  }

  /**
   * Beats now instead of at the next interval (while running): after Redis (re)connects, the heartbeat key
   * may be missing (a first beat that failed, a Redis that restarted empty), and routers discover the
   * cluster only by that key, so waiting a whole interval would hide every route of the cluster.
   */
  beatNow(): void {
    if (!this.#running || this.#holds > 0) return;
    // A beat in flight may have been sent before Redis was back: beat again right after it.
    if (this.#inFlight) {
      this.#beatAgain = true;
      return;
    }
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#tick();
  }

  /**
   * No beat leaves until `work` settles, then one beats at once. After Redis restarted empty the cluster is
   * invisible to routers until its heartbeat is back; a periodic beat landing mid re-push would announce it
   * with only some of its Services, and routers would swap their last full view for that partial one.
   */
  holdUntil(work: Promise<unknown>): void {
    this.#holds++;
    // The caller is re-pushing: the beat after it announces the cluster again, nothing to check first.
    this.#announced = false;
    this.#cancelTimer();
    const release = () => {
      this.#holds--;
      if (this.#holds === 0) this.beatNow();
    };
    work.then(release, release);
  }

  /** No further beats; the lease then runs out on its own unless the next leader beats. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#cancelTimer();
    if (this.#inFlight) await this.#inFlight;
  }

  get running(): boolean {
    return this.#running;
  }

  /** A re-push holds the beats: the store lacks some of what the sync holds until it is done. */
  get holding(): boolean {
    return this.#holds > 0;
  }

  #tick(): void {
    this.#timer = undefined;
    // Held: the release beats, and the periodic schedule restarts from there.
    if (!this.#running || this.#holds > 0) return;
    this.#inFlight = this.#beat().finally(() => {
      this.#inFlight = undefined;
      // setTimeout after each beat rather than setInterval: a slow Redis never stacks up beats.
      if (this.#running)
        this.#timer = this.#timers.setTimeout(() => this.#tick(), this.#beatAgain ? 0 : this.#intervalMs);
      this.#beatAgain = false;
    });
  }

  async #beat(): Promise<void> {
    const { writer, holder, leaseMs, logger, metrics } = this.#options;
    const at = this.#now();
    try {
      const ifRegistered = this.#announced && this.#options.onStoreLost !== undefined;
      const apiserverUnreachableSince = this.#options.unreachableSince?.();
      const services = this.#options.storedServices?.();
      if (
        !(await writer.heartbeat({ holder, leaseMs, at, ifRegistered, apiserverUnreachableSince, services }))
      ) {
        this.#storeLost();
        return;
      }
      this.#announced = true;
      metrics.set("lastHeartbeat", Math.floor(at / 1000));
    } catch (error) {
      metrics.count("heartbeatErrors");
      logger.warn("heartbeat failed", { cluster: writer.cluster, error });
    }
  }

  /** The beat found the record it only replaces gone: re-push (onStoreLost) before announcing again. */
  #storeLost(): void {
    this.#announced = false;
    this.#options.metrics.count("storeLosses");
    this.#options.logger.warn("the store lost this cluster's records; re-pushing before the next heartbeat", {
      cluster: this.#options.writer.cluster,
    });
    this.#options.onStoreLost?.();
  }

  #cancelTimer(): void {
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
