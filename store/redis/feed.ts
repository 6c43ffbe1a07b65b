import type { Cluster, Redis, RedisOptions } from "ioredis";
import { sleep } from "../../lib/async.js";
import { exponentialDelay } from "../../lib/backoff.js";
import type { Logger } from "../../lib/logger.js";
import { createWarnOnce, type WarnOnce } from "../../lib/warn-once.js";
import { clusterKeys } from "../keys.js";
import { untilReady } from "./client.js";
import { redisFailureFields } from "./connection-problems.js";
import { type ClusterChanges, changesOf } from "./feed-entries.js";
import { type FeedScope, SlotFeedScope } from "./feed-scope.js";
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

/** Entries per XREAD; a full batch means we may lag behind, so positions are re-verified. */
const READ_BATCH = 500;
const FEED_RETRY = { initialMs: 50, maxMs: 2_000 };
/** The standalone feed's id in logs and health: it follows every cluster. */
const ALL_CLUSTERS = "*";

/** A read of a feed's streams: none to read (all waiting), a reply (or none within the block), a full batch. */
type ReadOutcome = "aborted" | "idle" | "read" | "full";

export class ChangeFeeds {
  readonly #options: ChangeFeedsOptions;
  readonly #warnings: WarnOnce;
  readonly #loops = new Map<string, Promise<void>>();
  readonly #connections = new Set<Redis>();
  readonly #unhealthy = new Set<string>();
  readonly #connectionOptions: RedisOptions;
  #started = false;

  constructor(options: ChangeFeedsOptions) {
    this.#options = options;
    this.#warnings = options.warnings ?? createWarnOnce(options.logger);
    this.#connectionOptions = {
      connectionName: options.connectionName,
      // The router's client is lazyConnect; a lazy duplicate would not connect until its first XREAD, which
      // the disabled offline queue then refuses: start() would wait out untilReady for nothing.
      lazyConnect: false,
      // A dropped XREAD must surface as an error (to re-verify positions), not be silently re-sent.
      autoResendUnfulfilledCommands: false,
      enableOfflineQueue: false,
      // A half-open socket would block forever: XREAD answers at least every blockMs, so silence means dead.
      socketTimeout: options.blockMs + 10_000,
    };
  }

  /** Starts the standalone feed (connected before it resolves) or one feed per known cluster. */
  async start(): Promise<void> {
    const { redis } = this.#options;
    if (isClusterClient(redis)) this.#startClusterFeeds(redis);
    else await this.#startSingleFeed(redis);
    this.#started = true;
  }

  /** Redis Cluster: starts a feed for each cluster that joined; nothing before start() or on standalone Redis. */
  followNewClusters(): void {
    const { redis } = this.#options;
    if (this.#started && isClusterClient(redis)) this.#startClusterFeeds(redis);
  }

  /** Started, and every loop verified its positions since its last error. */
  healthy(): boolean {
    return this.#started && this.#unhealthy.size === 0;
  }

  /** Disconnects the feed connections and waits for every loop to end (abort `signal` first). */
  async close(): Promise<void> {
    for (const connection of this.#connections) connection.disconnect();
    await Promise.all(this.#loops.values());
  }

  /** One blocking XREAD loop; after any error it re-verifies its positions (and asks for a fresh connection). */
  async #follow(scope: FeedScope): Promise<void> {
    const { logger, signal } = this.#options;
    this.#unhealthy.add(scope.id);
    let verify = true;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const connection = await scope.connection();
        if (!connection || signal.aborted) break;
        if (verify) {
          await this.#options.verify(scope.names());
          verify = false;
          this.#unhealthy.delete(scope.id);
        }
        const outcome = await this.#readOnce(scope, connection);
        if (outcome === "aborted") break;
        if (outcome === "idle") continue;
        verify = outcome === "full";
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
        this.#unhealthy.add(scope.id);
        await sleep(exponentialDelay(failures, FEED_RETRY), signal);
      }
    }
    this.#unhealthy.delete(scope.id);
  }

  /**
   * One XREAD of the scope's streams from their positions, its batch applied; "full" when a stream gave a whole
   * batch (we may lag behind: positions are verified again). A cluster over its change rate waits.
   */
  async #readOnce(scope: FeedScope, connection: Redis): Promise<ReadOutcome> {
    const { signal } = this.#options;
    const { positions, resumeMs } = this.#positionsOf(scope.names());
    if (positions.length === 0) {
      await sleep(resumeMs, signal);
      return "idle";
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
    if (signal.aborted) return "aborted";
    if (!reply) return "read";
    const clusterOf = new Map(positions.map(({ key, cluster }) => [key, cluster]));
    await this.#options.apply(changesOf(reply, clusterOf, this.#warnings));
    return reply.some(([, entries]) => entries.length >= READ_BATCH) ? "full" : "read";
  }

  /** Where each cluster's stream is read from, leaving out those waiting; how long the read may block. */
  #positionsOf(names: readonly string[]) {
    const { prefix, blockMs } = this.#options;
    let resumeMs = blockMs;
    const positions = names.flatMap((cluster) => {
      const lastChangeId = this.#options.lastChangeIdOf(cluster);
      const wait = this.#options.waitMs?.(cluster) ?? 0;
      if (wait > 0) resumeMs = Math.min(resumeMs, wait);
      return lastChangeId === undefined || wait > 0
        ? []
        : [{ cluster, key: clusterKeys(prefix, cluster).changes, lastChangeId }];
    });
    return { positions, resumeMs };
  }

  /** Standalone Redis: every cluster's stream in one XREAD on one duplicate connection that ioredis reconnects. */
  async #startSingleFeed(client: Redis): Promise<void> {
    const connection = client.duplicate(this.#connectionOptions);
    connection.on("error", () => {});
    this.#connections.add(connection);
    // Not a failure worth a warning: the duplicate is still connecting when start() returns.
    await untilReady(connection, 2_000);
    const scope: FeedScope = {
      id: ALL_CLUSTERS,
      names: () => this.#options.clusterNames(),
      connection: async () => connection,
      failed: () => {},
    };
    this.#loops.set(ALL_CLUSTERS, this.#follow(scope));
  }

  /** Redis Cluster: a loop per known cluster, each on its own connection to the master of that cluster's slot. */
  #startClusterFeeds(client: Cluster): void {
    for (const cluster of this.#options.clusterNames()) {
      if (this.#loops.has(cluster)) continue;
      const scope = new SlotFeedScope(cluster, {
        client,
        key: clusterKeys(this.#options.prefix, cluster).changes,
        connectionOptions: this.#connectionOptions,
        connections: this.#connections,
        followed: () => this.#options.lastChangeIdOf(cluster) !== undefined,
      });
      const loop = this.#follow(scope).finally(() => {
        scope.failed();
        this.#loops.delete(cluster);
      });
      this.#loops.set(cluster, loop);
    }
  }
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
