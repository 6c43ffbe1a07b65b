import type { Logger } from "../../../lib/logger.js";
import type { ClusterView, Snapshot, SnapshotSource } from "../../../store/store.js";

export interface FailStaticBoundOptions {
  /** FAIL_STATIC_MAX_MS: how long a stale cluster may still serve; 0 = for ever. */
  readonly maxStaleMs: number;
  readonly now: () => number;
  readonly logger: Logger;
}

/** A cluster that stopped serving: stale for longer than the bound. */
export interface ExpiredCluster {
  /** Since when (epoch ms) its sync has not beaten, as the bound counts it. */
  readonly quietSince: number;
}

const EMPTY = new Map<never, never>();

/** FAIL_STATIC_MAX_MS's default (router-env.ts says why an hour). */
export const DEFAULT_FAIL_STATIC_MAX_MS = 3_600_000;

/**
 * Fail static with a bound. A route that only stale clusters publish keeps serving their last known backends
 * (routes/clusters.ts): a sync or Redis outage must not take traffic down. But a cluster whose sync is gone for
 * good would serve for ever, and Pod IPs are reused once a cluster is torn down, so after `maxStaleMs` without a
 * heartbeat a stale cluster serves nothing: this source hands the router its view with no routes and no Services
 * (it stays listed, stale, for explain and the dashboard), and says so once in the log. The quiet time is
 * counted from the cluster's last heartbeat record where the source reads them (Node), else from when this
 * router first saw it stale (Workers isolates, MemoryStore). A heartbeat brings it back at once.
 *
 * @example
 * const source = new FailStaticBound(redisSource, { maxStaleMs: 3_600_000, now: Date.now, logger });
 * source.current(); // the store's snapshot, expired clusters emptied
 */
export class FailStaticBound implements SnapshotSource {
  private readonly firstSeenStale = new Map<string, number>();
  private expiredClusters = new Map<string, ExpiredCluster>();
  private lastInput: Snapshot | undefined;
  private lastOutput: Snapshot | undefined;
  /** The next time a stale cluster of lastInput may expire (Infinity: none). */
  private nextCheckAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly inner: SnapshotSource,
    private readonly options: FailStaticBoundOptions,
  ) {
    if (inner.status)
      this.status = () => inner.status?.() as ReturnType<NonNullable<SnapshotSource["status"]>>;
    if (inner.heartbeats) this.heartbeats = () => inner.heartbeats?.() ?? new Map();
  }

  readonly status?: SnapshotSource["status"];
  readonly heartbeats?: SnapshotSource["heartbeats"];

  current(): Snapshot | undefined | Promise<Snapshot | undefined> {
    const snapshot = this.inner.current();
    return snapshot instanceof Promise
      ? snapshot.then((loaded) => this.bounded(loaded))
      : this.bounded(snapshot);
  }

  /** The clusters serving nothing now, by name. */
  expired(): ReadonlyMap<string, ExpiredCluster> {
    return this.expiredClusters;
  }

  private bounded(snapshot: Snapshot | undefined): Snapshot | undefined {
    if (!snapshot || this.options.maxStaleMs <= 0) return snapshot;
    const now = this.options.now();
    // The hot path: the same snapshot, and no stale cluster due yet.
    if (snapshot === this.lastInput && now < this.nextCheckAt) return this.lastOutput;
    const expired = this.expiredIn(snapshot, now);
    const changed = !sameKeys(expired, this.expiredClusters);
    if (changed) this.report(expired, now);
    this.expiredClusters = expired;
    if (snapshot !== this.lastInput || changed) {
      this.lastInput = snapshot;
      this.lastOutput =
        expired.size === 0
          ? snapshot
          : {
              version: snapshot.version,
              clusters: snapshot.clusters.map((view) => emptiedIf(view, expired)),
            };
    }
    return this.lastOutput;
  }

  private expiredIn(snapshot: Snapshot, now: number): Map<string, ExpiredCluster> {
    const { maxStaleMs } = this.options;
    const beats = this.inner.heartbeats?.();
    const expired = new Map<string, ExpiredCluster>();
    this.nextCheckAt = Number.POSITIVE_INFINITY;
    for (const view of snapshot.clusters) {
      if (!view.stale) {
        this.firstSeenStale.delete(view.name);
        continue;
      }
      let seen = this.firstSeenStale.get(view.name);
      if (seen === undefined) {
        seen = now;
        this.firstSeenStale.set(view.name, seen);
      }
      const quietSince = beats?.get(view.name)?.at ?? seen;
      if (now - quietSince >= maxStaleMs) expired.set(view.name, { quietSince });
      else this.nextCheckAt = Math.min(this.nextCheckAt, quietSince + maxStaleMs);
    }
    return expired;
  }

  private report(expired: ReadonlyMap<string, ExpiredCluster>, now: number): void {
    const { logger, maxStaleMs } = this.options;
    for (const [cluster, { quietSince }] of expired) {
      if (this.expiredClusters.has(cluster)) continue;
      logger.warn(
        "a cluster stale for longer than FAIL_STATIC_MAX_MS serves nothing now (if it is gone for good, " +
          "remove it: sync --retire)",
        { cluster, quietForMs: now - quietSince, maxStaleMs },
      );
    }
    for (const cluster of this.expiredClusters.keys()) {
      if (!expired.has(cluster)) logger.info("an expired cluster serves again", { cluster });
    }
  }
}

function emptiedIf(view: ClusterView, expired: ReadonlyMap<string, ExpiredCluster>): ClusterView {
  if (!expired.has(view.name)) return view;
  return { name: view.name, stale: true, servicesV2: EMPTY, services: EMPTY, routes: EMPTY };
}

function sameKeys(a: ReadonlyMap<string, unknown>, b: ReadonlyMap<string, unknown>): boolean {
  if (a.size !== b.size) return false;
  for (const key of a.keys()) if (!b.has(key)) return false;
  return true;
}
