import type { WarnOnce } from "../../lib/warn-once.js";
import { type ClusterState, lostCluster } from "../../store/cluster-state.js";
import { clusterKeys } from "../../store/keys.js";
import { decodedHeartbeat } from "../../store/redis/heartbeats.js";
import { hashEntries } from "../../store/redis/replies.js";
import { lastEntryId, STREAM_START_ID } from "../../store/redis/streams.js";
import type { RouteRecord } from "../../store/routes.js";
import type { ClusterHeartbeat } from "../../store/store.js";
import {
  type ClusterRecords,
  clusterView,
  type DecodedService,
  decodeClusterRecords,
  decodeStoredRoute,
  decodeStoredService,
  updatedRecords,
} from "../../store/stored-records.js";

/**
 * What a Workers isolate keeps of the store between refreshes (pure: commands out, replies in). The runtime
 * (delta-reader.ts) sends the commands these files build and hands the replies back; everything else,
 * the decision what to read and the decoding, happens here, so it is tested table-driven.
 */

/** One Redis command as ioredis' pipeline takes it: lower-case name, then arguments. */
export type Command = readonly [string, ...string[]];
/** One pipelined reply as ioredis gives it: the error Redis answered for this command, or its value. */
export type Reply = readonly [Error | null, unknown];

export interface StoreState {
  readonly clusters: ReadonlyMap<string, ClusterState>;
  /**
   * Names the registry (or a heartbeat-shaped key) lists whose heartbeat key was missing when last looked
   * at: only their heartbeat is checked on each refresh, so a name left behind by a removed cluster costs one
   * EXISTS, not a load.
   */
  readonly absent: ReadonlySet<string>;
  /** SCAN cursor of the sweep for heartbeat keys (a sync from before the registry never adds its name). */
  readonly scanCursor: string;
}

export const EMPTY_STATE: StoreState = { clusters: new Map(), absent: new Set(), scanCursor: "0" };

/** How many commands fullClusterCommands sends per cluster. */
export const FULL_CLUSTER_COMMANDS = 5;

/**
 * One cluster read whole: the stream position first (everything written during or after the read comes
 * after it), then both hashes, the lease (missing = stale) and the heartbeat record (missing = not
 * registered). The same reads as store/redis/snapshot.ts loadCluster, as commands of a pipeline shared by
 * every cluster, except that the heartbeat record is read rather than only looked for: it says where the
 * cluster runs.
 */
export function fullClusterCommands(prefix: string, cluster: string): Command[] {
  const keys = clusterKeys(prefix, cluster);
  return [
    ["xrevrange", keys.changes, "+", "-", "COUNT", "1"],
    ["hgetall", keys.services],
    ["hgetall", keys.routes],
    ["exists", keys.lease],
    ["get", keys.heartbeat],
  ];
}

/**
 * A GET of a heartbeat record: whether it is there (the cluster is registered) and what it says; a record
 * that does not decode is reported once while it stays so, and counts as there.
 */
export function readHeartbeat(
  cluster: string,
  reply: unknown,
  warnings: WarnOnce | undefined,
): { readonly present: boolean; readonly heartbeat: ClusterHeartbeat | undefined } {
  if (typeof reply !== "string") return { present: false, heartbeat: undefined };
  return { present: true, heartbeat: decodedHeartbeat(cluster, reply, warnings) };
}

export type FullClusterResult =
  | { readonly state: ClusterState | undefined }
  | { readonly unreadable: string };

/**
 * The replies of fullClusterCommands as the cluster's state: undefined when its heartbeat is missing and
 * nothing was known of it; `previous` marked stale and unregistered when it was (fail static);
 * `unreadable` when Redis refused a key as its type (WRONGTYPE: something else was written under its name).
 */
export function readFullCluster(
  cluster: string,
  replies: readonly Reply[],
  previous: ClusterState | undefined,
  warnings: WarnOnce,
): FullClusterResult {
  const failed = replies.find(([error]) => error !== null)?.[0];
  if (failed) return { unreadable: failed.message };
  const [lastEntries, services, routes, lease, heartbeatReply] = replies.map(([, value]) => value);
  const lastChangeId = lastEntryId(lastEntries) ?? STREAM_START_ID;
  const { present, heartbeat } = readHeartbeat(cluster, heartbeatReply, warnings);
  if (!present) return { state: previous && lostCluster(previous, lastChangeId) };
  const records = decodeClusterRecords(cluster, hashEntries(services), hashEntries(routes), warnings);
  const view = clusterView(cluster, lease !== 1, records);
  return { state: { view, records, lastChangeId, registered: true, heartbeat } };
}

/** Ids of records read by name (HMGET), and the HMGET replies' values, services and routes apart. */
export interface NamedRecords<T> {
  readonly services: T;
  readonly routes: T;
}

/**
 * `base` with the records HMGET read by id: each decoded (an invalid one reported once, as any record), one
 * that is gone or invalid removed. The cold read builds a host's records from nothing this way, a refresh
 * applies the records a change batch names.
 */
export function withNamedRecords(
  cluster: string,
  base: ClusterRecords,
  ids: NamedRecords<readonly string[]>,
  values: NamedRecords<unknown>,
  warnings: WarnOnce,
): ClusterRecords {
  const services = new Map<string, DecodedService | undefined>();
  const serviceRaws = Array.isArray(values.services) ? values.services : [];
  ids.services.forEach((id, index) => {
    const raw: unknown = serviceRaws[index];
    services.set(id, typeof raw === "string" ? decodeStoredService(cluster, id, raw, warnings) : undefined);
  });
  const routes = new Map<string, RouteRecord | undefined>();
  const routeRaws = Array.isArray(values.routes) ? values.routes : [];
  ids.routes.forEach((id, index) => {
    const raw: unknown = routeRaws[index];
    routes.set(id, typeof raw === "string" ? decodeStoredRoute(cluster, id, raw, warnings) : undefined);
  });
  return updatedRecords(base, services, routes);
}

/** Sends `commands` in order and yields each one's reply; what delta-reader.ts does with one pipeline. */
export type RunPipeline = (commands: readonly Command[]) => Promise<readonly Reply[]>;
