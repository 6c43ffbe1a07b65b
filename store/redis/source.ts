import { type Cluster, Redis } from "ioredis";
import * as v from "valibot";
import { sleep } from "../../lib/async.js";
import { exponentialDelay } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import { clusterKeys } from "../keys.js";
import { ChangeEntrySchema, type ServiceRecord } from "../records.js";
import type { ClusterView, Snapshot, SnapshotSource, SourceStatus } from "../store.js";
import { untilReady } from "./client.js";
import {
  discoverClusters,
  isClusterClient,
  type LoadedCluster,
  loadCluster,
  readServices,
  STREAM_START_ID,
} from "./snapshot.js";

/**
 * The Node router's store reader: decoded records live in memory and `current()` is synchronous, so Redis is
 * never on the request path. Changes arrive through each cluster's change stream (XREAD BLOCK on a dedicated
 * connection), resumed from the last id seen after any disconnect; a trimmed or reset stream, or a restarted
 * Redis, forces a full reload of what it affects. A periodic refresh re-reads leases and finds new clusters.
 * While Redis is unreachable the last snapshot keeps serving (fail static).
 *
 * Redis Cluster: one multi-key XREAD needs every stream in one hash slot, which clusters' keys are not (each has
 * its own `{cluster}` tag), and a blocking read on the Cluster client would hold up that node's connection for
 * every other command. So there each cluster's stream gets its own blocking connection to the master serving its
 * slot, looked up again after any error (a failover or a moved slot). Redis Cluster has no single run_id; a
 * master that lost its data shows up per stream (gone or reset), which reloads that cluster.
 */

export interface RedisSnapshotSource extends SnapshotSource {
  current(): Snapshot | undefined;
  /** Loads once (resolves even if Redis is down: the refresh keeps trying) and starts following changes. */
  start(): Promise<void>;
  /** Stops following, closes the blocking connection; the caller owns and closes `redis`. */
  close(): Promise<void>;
  status(): SourceStatus;
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
  /** CLIENT SETNAME of the blocking connection, so operators can find it. */
  readonly connectionName?: string;
}

interface ClusterState {
  readonly view: ClusterView;
  readonly lastId: string;
  /**
   * The services were read while the heartbeat record existed. False once the record went missing: the store
   * lost the cluster's keys, and records kept from before (fail static) may include Services deleted
   * meanwhile, which a re-push never announces; the cluster is read whole again when its heartbeat is back.
   */
  readonly registered: boolean;
}

/** Entries per XREAD; a full batch means we may lag behind, so positions are re-verified. */
const READ_BATCH = 500;
const FEED_RETRY = { initialMs: 50, maxMs: 2_000 };

export function createRedisSnapshotSource(options: RedisSnapshotSourceOptions): RedisSnapshotSource {
  const { redis, prefix, logger, now } = options;
  const refreshIntervalMs = options.refreshIntervalMs ?? 1_000;
  const blockMs = options.blockMs ?? refreshIntervalMs;
  const closing = new AbortController();
  /** Change-feed loops: one over every stream (standalone), or one per cluster (Redis Cluster). */
  const feeds = new Map<string, Promise<void>>();
  const feedConnections = new Set<Redis>();
  const unhealthyFeeds = new Set<string>();
  /** Redis Cluster: starts a feed for clusters that joined. */
  let onClustersChanged: () => void = () => {};
  let feedsStarted = false;
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
    onClustersChanged();
  };

  /** A cluster whose heartbeat vanished keeps its last records, marked stale: fail static, never a blank store. */
  const adopt = (loaded: LoadedCluster): ClusterState | undefined => {
    const previous = clusters.get(loaded.view.name);
    if (loaded.registered) return { view: loaded.view, lastId: loaded.lastChangeId, registered: true };
    if (!previous) return undefined;
    return { view: { ...previous.view, stale: true }, lastId: loaded.lastChangeId, registered: false };
  };

  const readRunId = async (): Promise<string | undefined> => {
    if (isClusterClient(redis)) return CLUSTER_RUN_ID;
    const info = await redis.info("server");
    return /^run_id:(\S+)/m.exec(info)?.[1];
  };

  const reloadAll = async () => {
    const [id, names] = await Promise.all([readRunId(), discoverClusters(redis, prefix, logger)]);
    const known = new Set([...clusters.keys(), ...names]);
    const loaded = await Promise.all([...known].map((name) => loadCluster(redis, prefix, name, logger)));
    const next = new Map<string, ClusterState>();
    for (const cluster of loaded) {
      const state = adopt(cluster);
      if (state) next.set(cluster.view.name, state);
    }
    clusters = next;
    runId = id;
    lastLoadAt = now();
    publish();
    logger.info("store loaded", { clusters: next.size, version: snapshot?.version });
  };

  const reloadCluster = async (name: string, reason: string) => {
    logger.info("reloading cluster", { cluster: name, reason });
    const state = adopt(await loadCluster(redis, prefix, name, logger));
    if (state) clusters.set(name, state);
    else clusters.delete(name);
    publish();
  };

  /** Periodic: lease flags, new clusters; the first full load if none succeeded yet. */
  const refresh = async () => {
    if (!snapshot) return reloadAll();
    const names = await discoverClusters(redis, prefix, logger);
    const known = [...clusters.keys()];
    // One command per cluster, sent together: each lease lives in its own slot, which a Redis Cluster pipeline
    // cannot span; on a standalone Redis ioredis writes them back to back all the same.
    const leases = await Promise.all(known.map((name) => redis.exists(clusterKeys(prefix, name).lease)));
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
      const state = adopt(await loadCluster(redis, prefix, name, logger));
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
        if (refreshHealthy || !snapshot)
          logger.warn("store refresh failed; serving the last snapshot", { error });
        refreshHealthy = false;
      }
      scheduleRefresh();
    }, refreshIntervalMs);
  };

  /**
   * Before resuming the feed: a restarted Redis (new run_id) reloads everything; a cluster whose stream was
   * trimmed past our position, reset (its last id is older than ours) or deleted reloads that cluster.
   */
  const verifyPositions = async (names: readonly string[]) => {
    const id = await readRunId();
    if (id !== runId) {
      logger.warn("redis instance changed; reloading the whole store", { previous: runId, current: id });
      return reloadAll();
    }
    const results = await Promise.all(
      names.map((name) =>
        redis.xinfo("STREAM", clusterKeys(prefix, name).changes).then(
          (reply): [Error | null, unknown] => [null, reply],
          (error: Error): [Error | null, unknown] => [error, undefined],
        ),
      ),
    );
    for (const [index, name] of names.entries()) {
      const state = clusters.get(name);
      const result = results[index];
      if (!state || !result) continue;
      const [error, reply] = result;
      const reason = error
        ? missingStreamReason(error, state.lastId)
        : streamGapReason(streamInfo(reply), state.lastId);
      if (reason) await reloadCluster(name, reason);
    }
  };

  /** Re-reads the services named by one XREAD batch; returns whether some stream filled the batch. */
  const applyEntries = async (reply: [string, [string, string[]][]][]) => {
    let lagging = false;
    const byKey = new Map([...clusters.keys()].map((name) => [clusterKeys(prefix, name).changes, name]));
    for (const [key, entries] of reply) {
      const name = byKey.get(key);
      const state = name === undefined ? undefined : clusters.get(name);
      const lastEntry = entries[entries.length - 1];
      if (name === undefined || !state || !lastEntry) continue;
      if (entries.length >= READ_BATCH) lagging = true;
      const touched = new Set<string>();
      for (const [entryId, fields] of entries) {
        const change = v.safeParse(ChangeEntrySchema, fieldsToObject(fields));
        if (change.success) touched.add(change.output.service);
        else logger.warn("skipping invalid change entry", { cluster: name, id: entryId });
      }
      const fresh = await readServices(redis, prefix, name, [...touched], logger);
      const services = new Map<string, ServiceRecord>(state.view.services);
      for (const [service, record] of fresh) {
        if (record) services.set(service, record);
        else services.delete(service);
      }
      clusters.set(name, { ...state, view: { ...state.view, services }, lastId: lastEntry[0] });
      logger.debug("applied changes", { cluster: name, services: [...touched], id: lastEntry[0] });
    }
    lastLoadAt = now();
    publish();
    return lagging;
  };

  /**
   * One blocking XREAD loop over the streams of `scope.names()`. After any error it re-verifies its positions
   * (and, on Redis Cluster, asks for a fresh connection) before reading again.
   */
  const follow = async (scope: FeedScope) => {
    unhealthyFeeds.add(scope.id);
    let verify = true;
    let failures = 0;
    while (!closing.signal.aborted) {
      try {
        const connection = await scope.connection();
        if (!connection || closing.signal.aborted) break;
        if (verify) {
          await exclusive(() => verifyPositions(scope.names()));
          verify = false;
          unhealthyFeeds.delete(scope.id);
        }
        const positions = scope.names().flatMap((name) => {
          const state = clusters.get(name);
          return state ? [{ key: clusterKeys(prefix, name).changes, id: state.lastId }] : [];
        });
        if (positions.length === 0) {
          await sleep(blockMs, closing.signal);
          continue;
        }
        const reply = await unlessClosed(
          connection,
          connection.xread(
            "COUNT",
            READ_BATCH,
            "BLOCK",
            blockMs,
            "STREAMS",
            ...positions.map(({ key }) => key),
            ...positions.map(({ id }) => id),
          ),
        );
        if (closing.signal.aborted) break;
        if (reply) verify = await exclusive(() => applyEntries(reply));
        if (failures > 0) logger.info("change feed resumed", { feed: scope.id });
        failures = 0;
      } catch (error) {
        if (closing.signal.aborted) break;
        scope.failed();
        verify = true;
        failures++;
        if (failures === 1) logger.warn("change feed interrupted; will resume", { feed: scope.id, error });
        unhealthyFeeds.add(scope.id);
        await sleep(exponentialDelay(failures, FEED_RETRY), closing.signal);
      }
    }
    unhealthyFeeds.delete(scope.id);
  };

  const feedConnectionOptions = {
    connectionName: options.connectionName ?? "edgeslice-router-changes",
    // The router's client is lazyConnect; a lazy duplicate would not connect until its first XREAD, which
    // the disabled offline queue then refuses: start() would wait out untilReady for nothing.
    lazyConnect: false,
    // A dropped XREAD must surface as an error (to re-verify positions), not be silently re-sent.
    autoResendUnfulfilledCommands: false,
    enableOfflineQueue: false,
    // A half-open socket would block forever: XREAD answers at least every blockMs, so silence means dead.
    socketTimeout: blockMs + 10_000,
  } as const;

  /** Standalone Redis: every cluster's stream in one XREAD on one duplicate connection that ioredis reconnects. */
  const startSingleFeed = async (client: Redis) => {
    const connection = client.duplicate(feedConnectionOptions);
    connection.on("error", () => {});
    feedConnections.add(connection);
    // Not a failure worth a warning: the duplicate is still connecting when start() returns.
    await untilReady(connection, 2_000);
    feeds.set(
      ALL_CLUSTERS,
      follow({
        id: ALL_CLUSTERS,
        names: () => [...clusters.keys()],
        connection: async () => connection,
        failed: () => {},
      }),
    );
  };

  /** Redis Cluster: a loop per known cluster, each on its own connection to the master of that cluster's slot. */
  const startClusterFeeds = (client: Cluster) => {
    for (const name of clusters.keys()) {
      if (feeds.has(name)) continue;
      let connection: Redis | undefined;
      const drop = () => {
        if (connection) {
          connection.disconnect();
          feedConnections.delete(connection);
        }
        connection = undefined;
      };
      const scope: FeedScope = {
        id: name,
        names: () => [name],
        connection: async () => {
          if (!clusters.has(name)) {
            drop();
            return undefined;
          }
          if (!connection) {
            connection = await connectToSlotMaster(
              client,
              clusterKeys(prefix, name).changes,
              feedConnectionOptions,
            );
            feedConnections.add(connection);
          }
          return connection;
        },
        failed: drop,
      };
      feeds.set(
        name,
        follow(scope).finally(() => {
          drop();
          feeds.delete(name);
        }),
      );
    }
  };

  return {
    current: () => snapshot,
    status: () => ({
      connected: refreshHealthy && feedsStarted && unhealthyFeeds.size === 0 && redis.status === "ready",
      lastLoadAt,
      version: snapshot?.version ?? 0,
    }),
    async start() {
      try {
        await exclusive(reloadAll);
        refreshHealthy = true;
      } catch (error) {
        logger.warn("initial store load failed; retrying in the background", { error });
      }
      if (isClusterClient(redis)) {
        startClusterFeeds(redis);
        onClustersChanged = () => startClusterFeeds(redis);
      } else await startSingleFeed(redis);
      feedsStarted = true;
      scheduleRefresh();
    },
    async close() {
      closing.abort();
      if (refreshTimer) clearTimeout(refreshTimer);
      for (const connection of feedConnections) connection.disconnect();
      await Promise.all(feeds.values());
      await queue;
    },
  };
}

/** What one change-feed loop follows, and on which connection. */
interface FeedScope {
  /** For logs and health: the cluster name, or ALL_CLUSTERS. */
  readonly id: string;
  names(): string[];
  /** The blocking connection to read on; undefined ends the loop (its cluster left the store). */
  connection(): Promise<Redis | undefined>;
  /** After an error: a Redis Cluster loop drops its connection, so the next goes to the slot's current master. */
  failed(): void;
}

const ALL_CLUSTERS = "*";
/** Stands in for run_id on Redis Cluster, which has no single instance to identify. */
const CLUSTER_RUN_ID = "redis-cluster";

/**
 * A plain connection to the master serving `key`'s slot, with the cluster client's credentials and TLS. No
 * reconnects of its own: after an error the feed asks for a new one, which follows a failover or a moved slot.
 */
async function connectToSlotMaster(
  cluster: Cluster,
  key: string,
  overrides: Record<string, unknown>,
): Promise<Redis> {
  const slot = Number(await cluster.cluster("KEYSLOT", key));
  const ranges = await cluster.cluster("SLOTS");
  const master = ranges.find(([start, end]) => slot >= start && slot <= end)?.[2];
  if (!master) throw new Error(`no master serves slot ${slot} of ${key}`);
  const [host, port] = master;
  const connection = new Redis({
    ...cluster.options.redisOptions,
    ...overrides,
    host,
    port,
    retryStrategy: () => null,
  });
  connection.on("error", () => {});
  await untilReady(connection, 2_000);
  if (connection.status !== "ready") {
    connection.disconnect();
    throw new Error(`the master of slot ${slot} at ${host}:${port} did not answer`);
  }
  return connection;
}

function byName(a: ClusterView, b: ClusterView): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function fieldsToObject(fields: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i];
    const value = fields[i + 1];
    if (name !== undefined && value !== undefined) out[name] = value;
  }
  return out;
}

export interface StreamInfo {
  readonly lastGeneratedId: string | undefined;
  /** Redis >= 7.0; moved by XDEL (not by trimming). */
  readonly maxDeletedEntryId: string | undefined;
  readonly firstEntryId: string | undefined;
  /** Redis >= 7.0: entries ever added; more than `length` means some were trimmed or deleted. */
  readonly entriesAdded: number | undefined;
  readonly length: number | undefined;
}

/** XINFO STREAM's flat reply. */
function streamInfo(reply: unknown): StreamInfo {
  const fields = new Map<string, unknown>();
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) fields.set(String(reply[i]), reply[i + 1]);
  }
  const text = (name: string) => {
    const value = fields.get(name);
    return typeof value === "string" ? value : undefined;
  };
  const count = (name: string) => {
    const value = fields.get(name);
    return typeof value === "number" ? value : undefined;
  };
  const first = fields.get("first-entry");
  const firstId: unknown = Array.isArray(first) ? first[0] : undefined;
  return {
    lastGeneratedId: text("last-generated-id"),
    maxDeletedEntryId: text("max-deleted-entry-id"),
    firstEntryId: typeof firstId === "string" ? firstId : undefined,
    entriesAdded: count("entries-added"),
    length: count("length"),
  };
}

function missingStreamReason(error: Error, lastId: string): string | undefined {
  if (!/no such key/i.test(error.message)) throw error;
  return lastId === STREAM_START_ID ? undefined : "change stream is gone";
}

/**
 * Whether resuming XREAD after `lastId` could miss changes. Trimming removes the oldest entries, so while our
 * own entry is still the oldest or older, nothing after it is gone; once the oldest entry is newer than ours,
 * entries after ours may have been trimmed (conservatively: reload).
 */
export function streamGapReason(info: StreamInfo, lastId: string): string | undefined {
  if (info.lastGeneratedId !== undefined && compareStreamIds(info.lastGeneratedId, lastId) < 0) {
    return "change stream was reset";
  }
  if (info.maxDeletedEntryId !== undefined && compareStreamIds(info.maxDeletedEntryId, lastId) > 0) {
    return "change stream entries after our position were deleted";
  }
  if (info.firstEntryId === undefined || compareStreamIds(info.firstEntryId, lastId) <= 0) return undefined;
  if (lastId !== STREAM_START_ID) return "change stream was trimmed past our position";
  // We started from an empty stream: a gap only if something was ever removed (unknown before Redis 7: assume so).
  const removed =
    info.entriesAdded === undefined || info.length === undefined || info.entriesAdded > info.length;
  return removed ? "change stream was trimmed past our position" : undefined;
}

/** Orders stream ids `ms-seq` numerically. */
export function compareStreamIds(a: string, b: string): number {
  const [aMs = 0n, aSeq = 0n] = a.split("-").map(BigInt);
  const [bMs = 0n, bSeq = 0n] = b.split("-").map(BigInt);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  return aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}

/**
 * With autoResendUnfulfilledCommands off, ioredis neither resends nor rejects a command that was in flight
 * when the connection closed if the reconnect succeeds before maxRetriesPerRequest flushes the queue: the
 * XREAD promise would never settle and the feed would stop for good after a short Redis blip. A close
 * rejects it here instead, so the loop re-verifies positions and resumes.
 */
function unlessClosed<T>(connection: Redis, command: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const closed = () => reject(new Error("change feed connection closed"));
    connection.once("close", closed);
    command.then(
      (value) => {
        connection.off("close", closed);
        resolve(value);
      },
      (error: unknown) => {
        connection.off("close", closed);
        reject(error);
      },
    );
  });
}
