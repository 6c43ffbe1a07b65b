import type { Cluster, Redis } from "ioredis";
import { sleep } from "../../lib/async.js";
import { exponentialDelay } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import { createWarnOnce, type WarnOnce } from "../../lib/warn-once.js";
import { clusterKeys } from "../keys.js";
import { untilReady } from "./client.js";
import { redisFailureFields } from "./connection-problems.js";
import { type ClusterChanges, changesOf } from "./feed-entries.js";
import { connectToSlotMaster } from "./slot-master.js";
import { isClusterClient } from "./snapshot.js";

/**
 * The change feeds of the router's store reader (source.ts): blocking XREAD loops over the clusters' change
 * streams, each on a dedicated connection, resumed from the last change id applied after any error.
 *
 * Standalone Redis: one loop reads every cluster's stream in one XREAD. Redis Cluster: one multi-key XREAD needs
 * every stream in one hash slot, which clusters' keys are not (each has its own `{cluster}` tag), and a blocking
 * read on the Cluster client would hold up that node's connection for every other command. So there each
 * cluster's stream gets its own loop and connection to the master serving its slot (slot-master.ts), looked up
 * again after any error (a failover or a moved slot).
 */

export interface ChangeFeedsOptions {
  readonly redis: Redis | Cluster;
  readonly prefix: string;
  readonly logger: Logger;
  /** Where malformed change entries are reported (once while a cluster's batches hold some). */
  readonly warnings?: WarnOnce;
  /** XREAD BLOCK timeout; new clusters join the standalone feed within it. */
  readonly blockMs: number;
  /** CLIENT SETNAME of the blocking connections, so operators can find them. */
  readonly connectionName: string;
  /** Aborted when the reader closes: every loop ends. */
  readonly signal: AbortSignal;
  /** The clusters the reader knows. */
  clusterNames(): string[];
  /** Where a cluster's feed resumes; undefined once the reader no longer knows the cluster. */
  lastChangeIdOf(cluster: string): string | undefined;
  /**
   * Makes resuming after these clusters' last change ids safe, reloading what a gap affects: before a loop's
   * first read, after any error and after a full batch.
   */
  verify(clusters: readonly string[]): Promise<void>;
  /** Applies one batch; called for every batch, even one whose clusters the reader forgot meanwhile. */
  apply(changes: readonly ClusterChanges[]): Promise<void>;
  /**
   * Milliseconds until the cluster's stream may be read again (0: now): a cluster over its change rate is left
   * out of the reads meanwhile, its entries waiting in its stream (store/change-rate.ts). Default: always 0.
   */
  waitMs?(cluster: string): number;
}

export interface ChangeFeeds {
  /** Starts the standalone feed (connected before it resolves) or one feed per known cluster. */
  start(): Promise<void>;
  /** Redis Cluster: starts a feed for each cluster that joined; nothing before start() or on standalone Redis. */
  followNewClusters(): void;
  /** Started, and every loop verified its positions since its last error. */
  healthy(): boolean;
  /** Disconnects the feed connections and waits for every loop to end (abort `signal` first). */
  close(): Promise<void>;
}

/** Entries per XREAD; a full batch means we may lag behind, so positions are re-verified. */
const READ_BATCH = 500;
const FEED_RETRY = { initialMs: 50, maxMs: 2_000 };
/** The standalone feed's id in logs and health: it follows every cluster. */
const ALL_CLUSTERS = "*";

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

export function createChangeFeeds(options: ChangeFeedsOptions): ChangeFeeds {
  const { redis, prefix, logger, blockMs, signal } = options;
  const warnings = options.warnings ?? createWarnOnce(logger);
  const loops = new Map<string, Promise<void>>();
  const connections = new Set<Redis>();
  const unhealthy = new Set<string>();
  let started = false;

  const connectionOptions = {
    connectionName: options.connectionName,
    // The router's client is lazyConnect; a lazy duplicate would not connect until its first XREAD, which
    // the disabled offline queue then refuses: start() would wait out untilReady for nothing.
    lazyConnect: false,
    // A dropped XREAD must surface as an error (to re-verify positions), not be silently re-sent.
    autoResendUnfulfilledCommands: false,
    enableOfflineQueue: false,
    // A half-open socket would block forever: XREAD answers at least every blockMs, so silence means dead.
    socketTimeout: blockMs + 10_000,
  } as const;

  /** One blocking XREAD loop; after any error it re-verifies its positions (and asks for a fresh connection). */
  const follow = async (scope: FeedScope) => {
    unhealthy.add(scope.id);
    let verify = true;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const connection = await scope.connection();
        if (!connection || signal.aborted) break;
        if (verify) {
          await options.verify(scope.names());
          verify = false;
          unhealthy.delete(scope.id);
        }
        let resumeMs = blockMs;
        const positions = scope.names().flatMap((cluster) => {
          const lastChangeId = options.lastChangeIdOf(cluster);
          const wait = options.waitMs?.(cluster) ?? 0;
          if (wait > 0) resumeMs = Math.min(resumeMs, wait);
          return lastChangeId === undefined || wait > 0
            ? []
            : [{ cluster, key: clusterKeys(prefix, cluster).changes, lastChangeId }];
        });
        if (positions.length === 0) {
          await sleep(resumeMs, signal);
          continue;
        }
        const reply = await unlessClosed(
          connection,
          connection.xread(
            "COUNT",
            READ_BATCH,
            "BLOCK",
            Math.max(1, resumeMs),
            "STREAMS",
            ...positions.map(({ key }) => key),
            ...positions.map(({ lastChangeId }) => lastChangeId),
          ),
        );
        if (signal.aborted) break;
        if (reply) {
          const clusterOf = new Map(positions.map(({ key, cluster }) => [key, cluster]));
          await options.apply(changesOf(reply, clusterOf, warnings));
          verify = reply.some(([, entries]) => entries.length >= READ_BATCH);
        }
        if (failures > 0) logger.info("change feed resumed", { feed: scope.id });
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        scope.failed();
        verify = true;
        failures++;
        if (failures === 1) {
          logger.warn("change feed interrupted; will resume", {
            feed: scope.id,
            ...redisFailureFields(error),
          });
        }
        unhealthy.add(scope.id);
        await sleep(exponentialDelay(failures, FEED_RETRY), signal);
      }
    }
    unhealthy.delete(scope.id);
  };

  /** Standalone Redis: every cluster's stream in one XREAD on one duplicate connection that ioredis reconnects. */
  const startSingleFeed = async (client: Redis) => {
    const connection = client.duplicate(connectionOptions);
    connection.on("error", () => {});
    connections.add(connection);
    // Not a failure worth a warning: the duplicate is still connecting when start() returns.
    await untilReady(connection, 2_000);
    loops.set(
      ALL_CLUSTERS,
      follow({
        id: ALL_CLUSTERS,
        names: () => options.clusterNames(),
        connection: async () => connection,
        failed: () => {},
      }),
    );
  };

  /** Redis Cluster: a loop per known cluster, each on its own connection to the master of that cluster's slot. */
  const startClusterFeeds = (client: Cluster) => {
    for (const cluster of options.clusterNames()) {
      if (loops.has(cluster)) continue;
      let connection: Redis | undefined;
      const drop = () => {
        if (connection) {
          connection.disconnect();
          connections.delete(connection);
        }
        connection = undefined;
      };
      const scope: FeedScope = {
        id: cluster,
        names: () => [cluster],
        connection: async () => {
          if (options.lastChangeIdOf(cluster) === undefined) {
            drop();
            return undefined;
          }
          if (!connection) {
            const key = clusterKeys(prefix, cluster).changes;
            connection = await connectToSlotMaster(client, key, connectionOptions);
            connections.add(connection);
          }
          return connection;
        },
        failed: drop,
      };
      loops.set(
        cluster,
        follow(scope).finally(() => {
          drop();
          loops.delete(cluster);
        }),
      );
    }
  };

  return {
    async start() {
      if (isClusterClient(redis)) startClusterFeeds(redis);
      else await startSingleFeed(redis);
      started = true;
    },
    followNewClusters() {
      if (started && isClusterClient(redis)) startClusterFeeds(redis);
    },
    healthy: () => started && unhealthy.size === 0,
    async close() {
      for (const connection of connections) connection.disconnect();
      await Promise.all(loops.values());
    },
  };
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
