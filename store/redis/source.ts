import type { Cluster, Redis } from "ioredis";
import type { Logger } from "../../lib/logger.js";
import { createWarnOnce } from "../../lib/warn-once.js";
import { clusterKeys } from "../keys.js";
import type { ClusterHeartbeat, ClusterView, Snapshot, SnapshotSource, SourceStatus } from "../store.js";
import { type ClusterRecords, clusterView, updatedRecords } from "../stored-records.js";
import { createChangeFeeds } from "./feed.js";
import type { ClusterChanges } from "./feed-entries.js";
import { readHeartbeats } from "./heartbeats.js";
import { readRunId } from "./run-id.js";
import {
  discoverClusters,
  isReplyError,
  type LoadedCluster,
  loadClusterOrSkip,
  readRoutes,
  readServices,
} from "./snapshot.js";
import { readStreamInfos, resumeGapReason } from "./streams.js";

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
}

interface ClusterState {
  readonly view: ClusterView;
  /** What the view was built from: a change batch updates it and builds the view again. */
  readonly records: ClusterRecords;
  /** Id of the last change stream entry applied: the feed resumes after it. */
  readonly lastChangeId: string;
  /**
   * The services were read while the heartbeat record existed. False once the record went missing: the store
   * lost the cluster's keys, and records kept from before (fail static) may include Services deleted
   * meanwhile, which a re-push never announces; the cluster is read whole again when its heartbeat is back.
   */
  readonly registered: boolean;
}

export function createRedisSnapshotSource(options: RedisSnapshotSourceOptions): RedisSnapshotSource {
  const { redis, prefix, logger, now } = options;
  // Malformed records and keys are reported once while they last, not on every reload (lib/warn-once.ts).
  const warnings = createWarnOnce(logger);
  let heartbeats: ReadonlyMap<string, ClusterHeartbeat> = new Map();
  const refreshIntervalMs = options.refreshIntervalMs ?? 1_000;
  const closing = new AbortController();
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;
  let clusters = new Map<string, ClusterState>();
  let snapshot: Snapshot | undefined;
  let runId: string | undefined;
  let lastLoadAt: number | undefined;
  let refreshHealthy = false;
  let queue: Promise<unknown> = Promise.resolve();

  /** State changes run one at a time, so a reload and a change batch never interleave. */
  const exclusive = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  };

  const publish = () => {
    const views = [...clusters.values()].map((state) => state.view).sort(byName);
    snapshot = { version: (snapshot?.version ?? 0) + 1, clusters: views };
    feeds.followNewClusters();
  };

  /** A cluster whose heartbeat vanished keeps its last records, marked stale: fail static, never a blank store. */
  const adopt = (loaded: LoadedCluster): ClusterState | undefined => {
    const previous = clusters.get(loaded.view.name);
    const { view, records, lastChangeId } = loaded;
    if (loaded.registered) return { view, records, lastChangeId, registered: true };
    if (!previous) return undefined;
    return { ...previous, view: { ...previous.view, stale: true }, lastChangeId, registered: false };
  };

  /** One cluster read whole; undefined (reported) when Redis cannot read its keys as their types. */
  const load = (name: string) => loadClusterOrSkip(redis, prefix, name, logger, warnings);
  const adoptLoaded = (loaded: LoadedCluster | undefined) => (loaded ? adopt(loaded) : undefined);

  const reloadAll = async () => {
    const [id, names] = await Promise.all([
      readRunId(redis),
      discoverClusters(redis, prefix, logger, warnings),
    ]);
    const known = [...new Set([...clusters.keys(), ...names])];
    // The heartbeat records with the first load: proximity steering reads each cluster's place from them.
    const [loaded, beats] = await Promise.all([
      Promise.all(known.map(load)),
      readHeartbeats(redis, prefix, known, warnings),
    ]);
    heartbeats = beats;
    const next = new Map<string, ClusterState>();
    known.forEach((name, index) => {
      const state = adoptLoaded(loaded[index]);
      if (state) next.set(name, state);
    });
    clusters = next;
    runId = id;
    lastLoadAt = now();
    publish();
    logger.info("store loaded", { clusters: next.size, version: snapshot?.version });
  };

  const reloadCluster = async (name: string, reason: string) => {
    logger.info("reloading cluster", { cluster: name, reason });
    const state = adoptLoaded(await load(name));
    if (state) clusters.set(name, state);
    else clusters.delete(name);
    publish();
  };

  /** Periodic: lease flags, new clusters; the first full load if none succeeded yet. */
  const refresh = async () => {
    if (!snapshot) return reloadAll();
    const names = await discoverClusters(redis, prefix, logger, warnings);
    const known = [...clusters.keys()];
    // One command per cluster, sent together: each lease lives in its own slot, which a Redis Cluster pipeline
    // cannot span; on a standalone Redis ioredis writes them back to back all the same.
    const [leases, beats] = await Promise.all([
      Promise.all(known.map((name) => redis.exists(clusterKeys(prefix, name).lease))),
      readHeartbeats(redis, prefix, known, warnings),
    ]);
    heartbeats = beats;
    let changed = false;
    const regained: string[] = [];
    known.forEach((name, index) => {
      const state = clusters.get(name);
      if (!state) return;
      const present = names.includes(name);
      if (present && !state.registered) {
        regained.push(name);
        return;
      }
      const registered = state.registered && present;
      const stale = leases[index] !== 1 || !present;
      if (stale !== state.view.stale || registered !== state.registered) {
        clusters.set(name, { ...state, registered, view: { ...state.view, stale } });
        if (stale !== state.view.stale)
          logger.info(stale ? "cluster went stale" : "cluster is fresh again", { cluster: name });
        changed = true;
      }
    });
    for (const name of regained) await reloadCluster(name, "its heartbeat is back after the store lost it");
    for (const name of names) {
      if (clusters.has(name)) continue;
      const state = adoptLoaded(await load(name));
      if (state) {
        clusters.set(name, state);
        logger.info("cluster discovered", { cluster: name });
        changed = true;
      }
    }
    lastLoadAt = now();
    if (changed) publish();
  };

  const scheduleRefresh = () => {
    if (closing.signal.aborted) return;
    refreshTimer = setTimeout(async () => {
      try {
        await exclusive(refresh);
        if (!refreshHealthy) logger.info("store refresh recovered");
        refreshHealthy = true;
      } catch (error) {
        // Once per outage: the Redis client's own report says why, at error level (connection-report.ts).
        if (refreshHealthy) logger.warn("store refresh failed; serving the last snapshot", { error });
        refreshHealthy = false;
      }
      scheduleRefresh();
    }, refreshIntervalMs);
  };

  /**
   * Before a feed resumes: a restarted Redis (new run_id) reloads everything; a cluster whose stream was
   * trimmed past our position, reset (its last id is older than ours) or deleted reloads that cluster.
   */
  const verifyPositions = async (names: readonly string[]) => {
    const id = await readRunId(redis);
    if (id !== runId) {
      logger.warn("redis instance changed; reloading the whole store", { previous: runId, current: id });
      return reloadAll();
    }
    const replies = await readStreamInfos(
      redis,
      names.map((name) => clusterKeys(prefix, name).changes),
    );
    for (const [index, name] of names.entries()) {
      const state = clusters.get(name);
      const reply = replies[index];
      if (!state || !reply) continue;
      let reason: string | undefined;
      try {
        reason = resumeGapReason(reply, state.lastChangeId);
      } catch (error) {
        // Redis answered, but not with a stream (WRONGTYPE): that cluster is reloaded, which leaves it out while
        // its keys stay unreadable, so its stream no longer fails the one XREAD every cluster shares.
        if (!isReplyError(error)) throw error;
        reason = `change stream unreadable: ${error.message}`;
      }
      if (reason) await reloadCluster(name, reason);
    }
  };

  /** Re-reads the services and routes one change batch names. */
  const applyChanges = async (changes: readonly ClusterChanges[]) => {
    for (const { cluster, lastChangeId, services: touched, routes: touchedRoutes } of changes) {
      const state = clusters.get(cluster);
      if (!state) continue;
      const [services, routes] = await Promise.all([
        readServices(redis, prefix, cluster, touched, logger, warnings),
        readRoutes(redis, prefix, cluster, touchedRoutes, logger, warnings),
      ]);
      const records = updatedRecords(state.records, services, routes);
      const view = clusterView(cluster, state.view.stale, records);
      clusters.set(cluster, { ...state, records, view, lastChangeId });
      logger.debug("applied changes", {
        cluster,
        services: touched,
        routes: touchedRoutes,
        id: lastChangeId,
      });
    }
    lastLoadAt = now();
    publish();
  };

  const feeds = createChangeFeeds({
    redis,
    prefix,
    logger,
    warnings,
    blockMs: options.blockMs ?? refreshIntervalMs,
    connectionName: options.connectionName ?? "edgeslice-router-changes",
    signal: closing.signal,
    clusterNames: () => [...clusters.keys()],
    lastChangeIdOf: (name) => clusters.get(name)?.lastChangeId,
    verify: (names) => exclusive(() => verifyPositions(names)),
    apply: (changes) => exclusive(() => applyChanges(changes)),
  });

  return {
    current: () => snapshot,
    heartbeats: () => heartbeats,
    status: () => ({
      connected: refreshHealthy && feeds.healthy() && redis.status === "ready",
      lastLoadAt,
      version: snapshot?.version ?? 0,
    }),
    async start() {
      // Closed before it started (the Node router starts it once Redis answers, which may be never).
      if (closing.signal.aborted) return;
      try {
        await exclusive(reloadAll);
        refreshHealthy = true;
      } catch (error) {
        logger.warn("initial store load failed; retrying in the background", { error });
      }
      // close() may have come while a hung Redis held the load (the Node router does not wait for start).
      if (closing.signal.aborted) return;
      await feeds.start();
      scheduleRefresh();
    },
    async close() {
      closing.abort();
      if (refreshTimer) clearTimeout(refreshTimer);
      await feeds.close();
      await queue;
    },
  };
}

function byName(a: ClusterView, b: ClusterView): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
