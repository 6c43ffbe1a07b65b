import type { Cluster, Redis } from "ioredis";
import * as v from "valibot";
import type { Logger } from "../../lib/logger.js";
import { createWarnOnce, type WarnOnce } from "../../lib/warn-once.js";
import { readable, unreadable } from "../cluster-state.js";
import { clusterFromHeartbeatKey, clusterKeys, heartbeatScanPattern } from "../keys.js";
import { ClusterNameSchema } from "../names.js";
import type { RouteRecord } from "../routes.js";
import type { ClusterView, Snapshot } from "../store.js";
import {
  type ClusterRecords,
  clusterView,
  type DecodedService,
  decodeClusterRecords,
  decodeStoredRoute,
  decodeStoredService,
} from "../stored-records.js";
import { hashEntries, pipelineValues } from "./replies.js";
import { lastEntryId, STREAM_START_ID } from "./streams.js";

/**
 * One-shot reads of the store's Redis layout (keys.ts) into decoded, validated views. Runtime-agnostic: only
 * ioredis calls, so the Node reader (source.ts) and the Workers entry share it. What is malformed (a record, a
 * heartbeat-shaped key, a cluster whose keys Redis cannot read as their type) is skipped and reported through
 * `warnings` (lib/warn-once.ts): a long-lived reader passes its own, so a problem is logged once while it
 * lasts, not on every reload; one-shot callers may leave it out.
 */

export interface LoadedCluster {
  readonly view: ClusterView;
  /** The decoded records the view was built from; a change batch updates these (stored-records.ts). */
  readonly records: ClusterRecords;
  /**
   * Id of the change stream's last entry, read before the services: a change feed that resumes after it
   * replays anything written during or after the read, so nothing is missed. STREAM_START_ID when empty.
   */
  readonly lastChangeId: string;
  /** The heartbeat key exists: the cluster is registered and its services hash is authoritative. */
  readonly registered: boolean;
}

/**
 * Cluster names found by their heartbeat keys (SCAN, never KEYS), sorted. On Redis Cluster a SCAN covers
 * one node only, so every master is scanned and the names merged.
 */
export async function discoverClusters(
  redis: Redis | Cluster,
  prefix: string,
  logger: Logger,
  warnings: WarnOnce = createWarnOnce(logger),
): Promise<string[]> {
  const found = new Set<string>();
  const invalid: string[] = [];
  for (const node of await scanTargets(redis)) await scanHeartbeats(node, prefix, found, invalid);
  // One line for all of them, once while any is left: a sync may create keys inside its own hash tag shaped
  // like heartbeats (`<prefix>:{east}:x}:{y}:heartbeat`), thousands of them, and SCAN meets each every refresh.
  const problem = "heartbeat keys";
  if (invalid.length === 0) warnings.clear(problem);
  else {
    warnings.warn(
      problem,
      "invalid cluster names",
      "ignoring heartbeat-shaped keys with an invalid cluster name",
      {
        count: invalid.length,
        examples: invalid.slice(0, 5),
      },
    );
  }
  return [...found].sort();
}

async function scanTargets(redis: Redis | Cluster): Promise<Redis[]> {
  if (!isClusterClient(redis)) return [redis];
  // Until the client is ready its node list holds only the seed nodes; a PING waits for the slot map
  // (queued like any command), so the masters listed below are the cluster's actual ones.
  if (redis.status !== "ready") await redis.ping();
  return redis.nodes("master");
}

async function scanHeartbeats(
  node: Redis,
  prefix: string,
  found: Set<string>,
  invalid: string[],
): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await node.scan(cursor, "MATCH", heartbeatScanPattern(prefix), "COUNT", 1000);
    cursor = next;
    for (const key of keys) {
      const cluster = clusterFromHeartbeatKey(prefix, key);
      if (cluster !== undefined && v.is(ClusterNameSchema, cluster)) found.add(cluster);
      else invalid.push(key);
    }
  } while (cursor !== "0");
}

/** Structural check, so the Workers bundle needs no runtime import of ioredis' Cluster class. */
export function isClusterClient(redis: Redis | Cluster): redis is Cluster {
  return redis.isCluster;
}

/**
 * One cluster in one round trip: stream position first (see LoadedCluster.lastChangeId), then the services
 * and routes, the lease (stale = lease key missing: server-side expiry, so no clock skew) and the heartbeat.
 * Every key shares the `{cluster}` hash tag, so on Redis Cluster the pipeline goes to the one node owning that
 * slot.
 */
export async function loadCluster(
  redis: Redis | Cluster,
  prefix: string,
  cluster: string,
  logger: Logger,
  warnings: WarnOnce = createWarnOnce(logger),
): Promise<LoadedCluster> {
  const keys = clusterKeys(prefix, cluster);
  const results = await redis
    .pipeline()
    .xrevrange(keys.changes, "+", "-", "COUNT", 1)
    .hgetall(keys.services)
    .hgetall(keys.routes)
    .exists(keys.lease)
    .exists(keys.heartbeat)
    .exec();
  const [lastEntries, services, routes, lease, heartbeat] = pipelineValues(results, 5);
  const records = decodeClusterRecords(cluster, hashEntries(services), hashEntries(routes), warnings);
  return {
    view: clusterView(cluster, lease !== 1, records),
    records,
    lastChangeId: lastEntryId(lastEntries) ?? STREAM_START_ID,
    registered: heartbeat === 1,
  };
}

/**
 * loadCluster, or undefined when Redis refused to read one of the cluster's keys as its type (a WRONGTYPE
 * reply: something else was written under its name), reported once while it lasts: one cluster's broken keys
 * never keep the others from loading. Connection errors still reject (the store as a whole is unreachable).
 */
export async function loadClusterOrSkip(
  redis: Redis | Cluster,
  prefix: string,
  cluster: string,
  logger: Logger,
  warnings: WarnOnce,
): Promise<LoadedCluster | undefined> {
  try {
    const loaded = await loadCluster(redis, prefix, cluster, logger, warnings);
    readable(warnings, cluster);
    return loaded;
  } catch (error) {
    if (!isReplyError(error)) throw error;
    unreadable(warnings, cluster, error.message, error);
    return undefined;
  }
}

/** An error Redis answered for one command (ioredis' ReplyError), as opposed to a connection failure. */
export function isReplyError(error: unknown): error is Error {
  return error instanceof Error && error.name === "ReplyError";
}

/** Every registered cluster whose keys can be read. */
async function loadClusters(
  redis: Redis | Cluster,
  prefix: string,
  logger: Logger,
  warnings: WarnOnce,
): Promise<LoadedCluster[]> {
  const clusters = await discoverClusters(redis, prefix, logger, warnings);
  const loaded = await Promise.all(
    clusters.map((cluster) => loadClusterOrSkip(redis, prefix, cluster, logger, warnings)),
  );
  return loaded.filter((cluster) => cluster !== undefined);
}

/** The whole store as one immutable snapshot (the Workers entry reloads this on its cache TTL). */
export async function loadSnapshot(
  redis: Redis | Cluster,
  options: { prefix: string; logger: Logger; version: number; warnings?: WarnOnce },
): Promise<Snapshot> {
  const warnings = options.warnings ?? createWarnOnce(options.logger);
  const loaded = await loadClusters(redis, options.prefix, options.logger, warnings);
  return { version: options.version, clusters: loaded.map((cluster) => cluster.view) };
}

/**
 * The current records of some services of one cluster (HMGET): decoded, or undefined when the service is
 * gone or its record cannot be served (reported).
 */
export async function readServices(
  redis: Redis | Cluster,
  prefix: string,
  cluster: string,
  services: readonly string[],
  logger: Logger,
  warnings: WarnOnce = createWarnOnce(logger),
): Promise<Map<string, DecodedService | undefined>> {
  return readDecoded(redis, clusterKeys(prefix, cluster).services, services, (service, raw) =>
    decodeStoredService(cluster, service, raw, warnings),
  );
}

/**
 * The current route records of some route ids of one cluster (HMGET): decoded, or undefined when the route is
 * gone or cannot be served (reported; a version 1 sync's value is not read).
 */
export async function readRoutes(
  redis: Redis | Cluster,
  prefix: string,
  cluster: string,
  ids: readonly string[],
  logger: Logger,
  warnings: WarnOnce = createWarnOnce(logger),
): Promise<Map<string, RouteRecord | undefined>> {
  return readDecoded(redis, clusterKeys(prefix, cluster).routes, ids, (id, raw) =>
    decodeStoredRoute(cluster, id, raw, warnings),
  );
}

/** Some fields of one hash (HMGET), each decoded; undefined for a field that is gone or does not decode. */
async function readDecoded<T>(
  redis: Redis | Cluster,
  key: string,
  fields: readonly string[],
  decode: (field: string, raw: string) => T | undefined,
): Promise<Map<string, T | undefined>> {
  const out = new Map<string, T | undefined>();
  if (fields.length === 0) return out;
  const raws = await redis.hmget(key, ...fields);
  fields.forEach((field, index) => {
    const raw = raws[index];
    out.set(field, typeof raw === "string" ? decode(field, raw) : undefined);
  });
  return out;
}
