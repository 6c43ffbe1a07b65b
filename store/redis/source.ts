import type { Cluster, Redis } from "ioredis";
import type { Logger } from "../../lib/logger.js";
import { createWarnOnce } from "../../lib/warn-once.js";
import { ChangeRate, DEFAULT_CHANGES_PER_SECOND } from "../change-rate.js";
import { DEFAULT_RECORD_BUDGET, type RecordBudget } from "../record-budget.js";
import type { ClusterHeartbeat, Snapshot, SnapshotSource, SourceStatus } from "../store.js";
import { applyChanges, verifyPositions } from "./change-application.js";
import { ClusterDiscovery } from "./cluster-discovery.js";
import { ClusterTable, type SourceReads } from "./cluster-table.js";
import { redisFailureFields } from "./connection-problems.js";
import { ChangeFeeds } from "./feed.js";
import { RefreshLoop, refreshLeases } from "./lease-refresh.js";

/**
 * The Node router's store reader: decoded records live in memory and `current()` is synchronous, so Redis is
 * never on the request path. Changes arrive through the change feeds (feed.ts), resumed from the last id seen
 * after any disconnect; a trimmed or reset stream, or a restarted Redis, forces a full reload of what it
 * affects. A periodic refresh re-reads leases and finds new clusters. While Redis is unreachable the last
 * snapshot keeps serving (fail static). Redis Cluster has no single run_id; a master that lost its data shows
 * up per stream (gone or reset), which reloads that cluster.
 *
 * @example
 * const source = createRedisSnapshotSource({ redis, prefix: "edgeslice", logger, now: Date.now });
 * await source.start(); // resolves even while Redis is down
 * const snapshot = source.current(); // synchronous; undefined until a first load succeeded
 * await source.close(); // then close `redis` yourself
 */
export interface RedisSnapshotSource extends SnapshotSource {
  current(): Snapshot | undefined;
  /** Loads once (resolves even if Redis is down: the refresh keeps trying) and starts following changes. */
  start(): Promise<void>;
  /** Stops following, closes the blocking connections; the caller owns and closes `redis`. */
  close(): Promise<void>;
  status(): SourceStatus;
  heartbeats(): ReadonlyMap<string, ClusterHeartbeat>;
}

export interface RedisSnapshotSourceOptions {
  readonly redis: Redis | Cluster;
  readonly prefix: string;
  readonly logger: Logger;
  readonly now: () => number;
  /** Lease and cluster-discovery refresh period. */
  readonly refreshIntervalMs?: number;
  /** XREAD BLOCK timeout; new clusters join the feed within it. */
  readonly blockMs?: number;
  /** CLIENT SETNAME of the blocking connections, so operators can find them. */
  readonly connectionName?: string;
  /** What the router holds of one cluster at most (store/record-budget.ts); default DEFAULT_RECORD_BUDGET. */
  readonly budget?: RecordBudget;
  /** Change entries of one cluster applied per second at most (store/change-rate.ts). */
  readonly changesPerSecond?: number;
  /**
   * The clusters whose records are read (CLUSTER_GRANTS lists them); undefined: every one. Any other cluster
   * is only counted: its records are never read nor decoded, and its change stream is not followed.
   */
  readonly grantedClusters?: ReadonlySet<string> | undefined;
}

export function createRedisSnapshotSource(options: RedisSnapshotSourceOptions): RedisSnapshotSource {
  const { redis, prefix, logger, now } = options;
  const granted = options.grantedClusters;
  const budget = options.budget ?? DEFAULT_RECORD_BUDGET;
  const perSecond = options.changesPerSecond ?? DEFAULT_CHANGES_PER_SECOND;
  // A cluster's change batches read at most its whole budget's bytes (CLUSTER_MAX_BYTES) a second.
  const rate = new ChangeRate(perSecond, { bytesPerSecond: budget.maxBytes });
  const base = { redis, prefix, logger, now, warnings: createWarnOnce(logger) };
  const reads: SourceReads = {
    ...base,
    budget,
    granted: granted && ((cluster) => granted.has(cluster)),
    rate,
    discovery: new ClusterDiscovery(base, granted),
  };
  const refreshIntervalMs = options.refreshIntervalMs ?? 1_000;
  const closing = new AbortController();
  const table = new ClusterTable(reads, () => feeds.followNewClusters());
  let queue: Promise<unknown> = Promise.resolve();

  /** State changes run one at a time, so a reload and a change batch never interleave. */
  const exclusive = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  };

  const refreshLoop = new RefreshLoop({
    intervalMs: refreshIntervalMs,
    logger,
    signal: closing.signal,
    refresh: () => exclusive(() => refreshLeases(table, reads)),
  });

  const feeds = new ChangeFeeds({
    redis,
    prefix,
    logger,
    warnings: reads.warnings,
    blockMs: options.blockMs ?? refreshIntervalMs,
    connectionName: options.connectionName ?? "edgeslice-router-changes",
    signal: closing.signal,
    // A cluster CLUSTER_GRANTS does not list is not followed: nothing it writes is read.
    clusterNames: () => [...table.clusters.keys()].filter((name) => reads.granted?.(name) ?? true),
    waitMs: (cluster) => rate.waitMs([cluster], now()),
    lastChangeIdOf: (name) => table.clusters.get(name)?.lastChangeId,
    verify: (names) => exclusive(() => verifyPositions(table, reads, names)),
    apply: (changes) => exclusive(() => applyChanges(table, reads, changes)),
  });

  return {
    current: () => table.snapshot,
    heartbeats: () => table.heartbeats,
    status: () => ({
      connected: refreshLoop.healthy && feeds.healthy() && redis.status === "ready",
      lastLoadAt: table.lastLoadAt,
      version: table.snapshot?.version ?? 0,
    }),
    async start() {
      // Closed before it started (the Node router starts it once Redis answers, which may be never).
      if (closing.signal.aborted) return;
      try {
        await exclusive(() => table.reloadAll());
        refreshLoop.healthy = true;
      } catch (error) {
        logger.warn("initial store load failed; retrying in the background", redisFailureFields(error));
      }
      // close() may have come while a hung Redis held the load (the Node router does not wait for start).
      if (closing.signal.aborted) return;
      await feeds.start();
      refreshLoop.schedule();
    },
    async close() {
      closing.abort();
      refreshLoop.stop();
      await feeds.close();
      await queue;
    },
  };
}
