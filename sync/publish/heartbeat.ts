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

export interface Heartbeat {
  /** Beats now and then every interval (while leading). */
  start(): void;
  /**
   * Beats now instead of at the next interval (while running): after Redis (re)connects, the heartbeat key
   * may be missing (a first beat that failed, a Redis that restarted empty), and routers discover the
   * cluster only by that key, so waiting a whole interval would hide every route of the cluster.
   */
  beatNow(): void;
  /**
   * No beat leaves until `work` settles, then one beats at once. After Redis restarted empty the cluster is
   * invisible to routers until its heartbeat is back; a periodic beat landing mid re-push would announce it
   * with only some of its Services, and routers would swap their last full view for that partial one.
   */
  holdUntil(work: Promise<unknown>): void;
  /** No further beats; the lease then runs out on its own unless the next leader beats. */
  stop(): Promise<void>;
  readonly running: boolean;
  /** A re-push holds the beats: the store lacks some of what the sync holds until it is done. */
  readonly holding: boolean;
}

/**
 * The cluster's heartbeat in the store: routers see a cluster, and trust its records, only while its lease
 * is fresh. One beat at start, then every interval; beats never overlap.
 *
 * @example
 * const heartbeat = createHeartbeat({ writer, holder: config.identity, leaseMs: 15_000, logger, metrics });
 * heartbeat.start();
 * await heartbeat.stop();
 */
export function createHeartbeat(options: HeartbeatOptions): Heartbeat {
  const { writer, holder, leaseMs, logger, metrics } = options;
  const intervalMs = options.intervalMs ?? Math.max(1, Math.floor(leaseMs / 3));
  const now = options.now ?? Date.now;
  const timers = options.timers ?? realTimers;
  let timer: unknown;
  let running = false;
  let inFlight: Promise<void> | undefined;
  let beatAgain = false;
  let holds = 0;
  /** A beat landed since the last hold: the heartbeat record should be in the store. */
  let announced = false;

  const beat = async () => {
    const at = now();
    try {
      const ifRegistered = announced && options.onStoreLost !== undefined;
      const apiserverUnreachableSince = options.unreachableSince?.();
      const services = options.storedServices?.();
      if (
        !(await writer.heartbeat({ holder, leaseMs, at, ifRegistered, apiserverUnreachableSince, services }))
      ) {
        announced = false;
        metrics.count("storeLosses");
        logger.warn("the store lost this cluster's records; re-pushing before the next heartbeat", {
          cluster: writer.cluster,
        });
        options.onStoreLost?.();
        return;
      }
      announced = true;
      metrics.set("lastHeartbeat", Math.floor(at / 1000));
    } catch (error) {
      metrics.count("heartbeatErrors");
      logger.warn("heartbeat failed", { cluster: writer.cluster, error });
    }
  };

  const tick = () => {
    timer = undefined;
    // Held: the release beats, and the periodic schedule restarts from there.
    if (!running || holds > 0) return;
    inFlight = beat().finally(() => {
      inFlight = undefined;
      // setTimeout after each beat rather than setInterval: a slow Redis never stacks up beats.
      if (running) timer = timers.setTimeout(tick, beatAgain ? 0 : intervalMs);
      beatAgain = false;
    });
  };

  const beatNow = () => {
    if (!running || holds > 0) return;
    // A beat in flight may have been sent before Redis was back: beat again right after it.
    if (inFlight) {
      beatAgain = true;
      return;
    }
    if (timer !== undefined) timers.clearTimeout(timer);
    tick();
  };

  return {
    start() {
      if (running) return;
      running = true;
      tick();
    },
    beatNow,
    holdUntil(work) {
      holds++;
      // The caller is re-pushing: the beat after it announces the cluster again, nothing to check first.
      announced = false;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      const release = () => {
        holds--;
        if (holds === 0) beatNow();
      };
      work.then(release, release);
    },
    async stop() {
      running = false;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      if (inFlight) await inFlight;
    },
    get holding() {
      return holds > 0;
    },
    get running() {
      return running;
    },
  };
}
