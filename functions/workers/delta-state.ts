import type { WarnOnce } from "../../lib/warn-once.js";
import { clusterKeys } from "../../store/keys.js";
import { decodeHeartbeatRecord } from "../../store/records.js";
import { heartbeatOf } from "../../store/redis/heartbeats.js";
import { hashEntries } from "../../store/redis/replies.js";
import { lastEntryId, STREAM_START_ID } from "../../store/redis/streams.js";
import type { ClusterHeartbeat, ClusterView, Snapshot } from "../../store/store.js";
import { type ClusterRecords, clusterView, decodeClusterRecords } from "../../store/stored-records.js";

/**
 * What a Workers isolate keeps of the store between refreshes (pure: commands out, replies in). The runtime
 * (delta-reader.ts) sends the commands these files build and hands the replies back; everything else,
 * the decision what to read and the decoding, happens here, so it is tested table-driven.
 */

/** One Redis command as ioredis' pipeline takes it: lower-case name, then arguments. */
export type Command = readonly [string, ...string[]];
/** One pipelined reply as ioredis gives it: the error Redis answered for this command, or its value. */
export type Reply = readonly [Error | null, unknown];

export interface ClusterState {
  readonly view: ClusterView;
  /** What the view was built from: a change batch updates it. */
  readonly records: ClusterRecords;
  /** Id of the last change entry applied (STREAM_START_ID for an empty stream): the next read starts there. */
  readonly lastChangeId: string;
  /**
   * The records were read while the heartbeat key existed. False once it went missing (the store lost the
   * cluster's keys): the last records stay, marked stale (fail static), until the heartbeat is back and the
   * cluster is read whole again.
   */
  readonly registered: boolean;
  /**
   * What the heartbeat record said when last read: the cluster's place, which proximity steering measures to
   * (kept out of the view: it changes every beat). Undefined when it did not decode.
   */
  readonly heartbeat?: ClusterHeartbeat | undefined;
}

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
  const problem = `heartbeat record ${cluster}`;
  const decoded = decodeHeartbeatRecord(reply);
  if (decoded.ok) {
    warnings?.clear(problem);
    return { present: true, heartbeat: heartbeatOf(decoded.value) };
  }
  warnings?.warn(problem, decoded.error, "ignoring an invalid heartbeat record", {
    cluster,
    error: decoded.error,
  });
  return { present: true, heartbeat: undefined };
}

/** Each cluster's last heartbeat record, as the source's heartbeats() gives them. */
export function heartbeatsOf(state: StoreState): Map<string, ClusterHeartbeat> {
  const heartbeats = new Map<string, ClusterHeartbeat>();
  for (const [name, cluster] of state.clusters)
    if (cluster.heartbeat) heartbeats.set(name, cluster.heartbeat);
  return heartbeats;
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
  if (!present) {
    if (!previous) return { state: undefined };
    return { state: lostCluster(previous, lastChangeId) };
  }
  const records = decodeClusterRecords(cluster, hashEntries(services), hashEntries(routes), warnings);
  const view = clusterView(cluster, lease !== 1, records);
  return { state: { view, records, lastChangeId, registered: true, heartbeat } };
}

/** A cluster whose heartbeat key is gone keeps its last records, stale: never a blank store. */
export function lostCluster(previous: ClusterState, lastChangeId = previous.lastChangeId): ClusterState {
  const view = previous.view.stale ? previous.view : { ...previous.view, stale: true };
  return { ...previous, view, lastChangeId, registered: false };
}

/** The views of every cluster, sorted by name, as the snapshot the app routes with. */
export function snapshotOf(state: StoreState, version: number): Snapshot {
  const names = [...state.clusters.keys()].sort();
  return {
    version,
    clusters: names.flatMap((name) => {
      const cluster = state.clusters.get(name);
      return cluster ? [cluster.view] : [];
    }),
  };
}

/** Sends `commands` in order and yields each one's reply; what delta-reader.ts does with one pipeline. */
export type RunPipeline = (commands: readonly Command[]) => Promise<readonly Reply[]>;
