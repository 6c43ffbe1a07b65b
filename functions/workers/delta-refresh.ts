import type { WarnOnce } from "../../lib/warn-once.js";
import {
  type ClusterState,
  observeCluster,
  REGAINED,
  readable,
  unreadable,
  withRecords,
} from "../../store/cluster-state.js";
import { clusterKeys } from "../../store/keys.js";
import type { ClusterChanges } from "../../store/redis/feed-entries.js";
import { changesOf } from "../../store/redis/feed-entries.js";
import { STREAM_START_ID } from "../../store/redis/streams.js";
import { discoveryCommands, readDiscovery } from "./delta-discovery.js";
import {
  type Command,
  FULL_CLUSTER_COMMANDS,
  fullClusterCommands,
  type Reply,
  readFullCluster,
  readHeartbeat,
  type StoreState,
  withNamedRecords,
} from "./delta-state.js";

/**
 * One refresh of a warm isolate, in two steps of one pipeline each:
 * 1. refreshCommands: the registry and a SCAN step (delta-discovery.ts), and per known cluster its change
 *    stream from the last entry applied (XRANGE is inclusive, so that entry comes back first while it is still
 *    in the stream), its lease and its heartbeat. When nothing changed this is the whole refresh.
 * 2. followUpCommands: HMGET of exactly the services and routes the new entries name, and a whole read of each
 *    cluster with a gap: our last entry no longer in the stream (trimmed past it, reset, or gone), more new
 *    entries than one batch, a heartbeat back after the store lost it, or a cluster not known before.
 */

/** New entries read per cluster and refresh; more means we lag far enough behind to read the cluster whole. */
export const CHANGE_BATCH = 256;

export function refreshCommands(prefix: string, state: StoreState): Command[] {
  const commands = discoveryCommands(prefix, state.scanCursor);
  for (const [name, cluster] of state.clusters) {
    const keys = clusterKeys(prefix, name);
    commands.push(
      ["xrange", keys.changes, cluster.lastChangeId, "+", "COUNT", String(CHANGE_BATCH + 1)],
      ["exists", keys.lease],
      ["get", keys.heartbeat],
    );
  }
  for (const name of state.absent) commands.push(["exists", clusterKeys(prefix, name).heartbeat]);
  return commands;
}

export interface RefreshPlan {
  /** The known clusters with their lease and heartbeat flags as this refresh found them. */
  readonly clusters: ReadonlyMap<string, ClusterState>;
  readonly absent: ReadonlySet<string>;
  readonly scanCursor: string;
  /** Clusters to read whole, and why (logged). */
  readonly reloads: ReadonlyMap<string, string>;
  /** What to re-read of clusters whose streams brought new entries. */
  readonly changes: readonly ClusterChanges[];
  /** Something the snapshot shows differs already (a lease or heartbeat flag). */
  readonly flagsChanged: boolean;
}

/** The replies of refreshCommands(prefix, state), in order. */
export function planRefresh(
  prefix: string,
  state: StoreState,
  replies: readonly Reply[],
  warnings: WarnOnce,
): RefreshPlan {
  const discovered = readDiscovery(prefix, replies.slice(0, 2), warnings);
  let at = 2;
  const clusters = new Map<string, ClusterState>();
  const reloads = new Map<string, string>();
  const changes: ClusterChanges[] = [];
  let flagsChanged = false;
  for (const [name, cluster] of state.clusters) {
    const [stream, lease, heartbeat] = replies.slice(at, at + 3);
    at += 3;
    const failed = [stream, lease, heartbeat].find((reply) => reply?.[0])?.[0];
    if (failed) {
      reloads.set(name, `keys unreadable: ${failed.message}`);
      clusters.set(name, cluster);
      continue;
    }
    const beat = readHeartbeat(name, heartbeat?.[1], warnings);
    const observed = observeCluster(cluster, { heartbeat: beat.present, lease: lease?.[1] === 1 });
    flagsChanged ||= observed.changed;
    if (observed.kind === "regained") reloads.set(name, REGAINED);
    if (observed.kind !== "seen") {
      // Lost: kept, stale, until its heartbeat is back; regained: read whole by the follow-up.
      clusters.set(name, observed.state);
      continue;
    }
    // The heartbeat record is kept beside the view: a new beat alone changes no snapshot.
    clusters.set(name, { ...observed.state, heartbeat: beat.heartbeat });
    const entries = streamEntries(stream?.[1]);
    const fresh = entriesAfter(entries, cluster.lastChangeId);
    if (fresh === undefined) reloads.set(name, "change stream no longer holds our last entry");
    else if (fresh.length >= CHANGE_BATCH) reloads.set(name, "more changes than one batch");
    else if (fresh.length > 0) {
      const key = clusterKeys(prefix, name).changes;
      changes.push(...changesOf([[key, fresh]], new Map([[key, name]]), warnings));
    }
  }
  const absent = new Set<string>();
  for (const name of state.absent) {
    const heartbeat = replies[at++];
    if (heartbeat?.[1] === 1) reloads.set(name, "cluster discovered");
    else absent.add(name);
  }
  for (const name of discovered.names) {
    if (!clusters.has(name) && !reloads.has(name) && !absent.has(name))
      reloads.set(name, "cluster discovered");
  }
  return { clusters, absent, scanCursor: discovered.scanCursor, reloads, changes, flagsChanged };
}

/**
 * The entries after `lastId` in an inclusive XRANGE from it, or undefined when `lastId` itself is no longer in
 * the stream: trimming removes the oldest entries first, so while ours is there nothing after it is gone.
 * From STREAM_START_ID (an empty stream when read) every entry is new: fewer than CHANGE_BATCH of them cannot
 * have been trimmed, the stream keeps CHANGE_STREAM_MAXLEN (far more) before it trims.
 */
export function entriesAfter(
  entries: readonly [string, string[]][],
  lastId: string,
): [string, string[]][] | undefined {
  if (lastId === STREAM_START_ID) return [...entries];
  if (entries[0]?.[0] !== lastId) return undefined;
  return entries.slice(1);
}

/** An XRANGE reply's entries; anything of another shape is left out. */
export function streamEntries(reply: unknown): [string, string[]][] {
  if (!Array.isArray(reply)) return [];
  return reply.filter(
    (entry): entry is [string, string[]] =>
      Array.isArray(entry) && typeof entry[0] === "string" && Array.isArray(entry[1]),
  );
}

export function followUpCommands(prefix: string, plan: RefreshPlan): Command[] {
  const commands: Command[] = [];
  for (const { cluster, services, routes } of plan.changes) {
    const keys = clusterKeys(prefix, cluster);
    if (services.length > 0) commands.push(["hmget", keys.services, ...services]);
    if (routes.length > 0) commands.push(["hmget", keys.routes, ...routes]);
  }
  for (const name of plan.reloads.keys()) commands.push(...fullClusterCommands(prefix, name));
  return commands;
}

export interface RefreshOutcome {
  readonly state: StoreState;
  /** The snapshot must be rebuilt: a record, a flag or the set of clusters changed. */
  readonly changed: boolean;
  /** For the log: what was read whole and why, what was dropped. */
  readonly notes: readonly { readonly message: string; readonly cluster: string; readonly reason: string }[];
}

/** The replies of followUpCommands(prefix, plan), in order (none when it sent nothing). */
export function applyFollowUp(
  plan: RefreshPlan,
  replies: readonly Reply[],
  warnings: WarnOnce,
): RefreshOutcome {
  const clusters = new Map(plan.clusters);
  const absent = new Set(plan.absent);
  const notes: { message: string; cluster: string; reason: string }[] = [];
  let changed = plan.flagsChanged;
  let at = 0;
  for (const { cluster: name, services, routes, lastChangeId } of plan.changes) {
    const serviceReply = services.length > 0 ? replies[at++] : undefined;
    const routeReply = routes.length > 0 ? replies[at++] : undefined;
    const cluster = clusters.get(name);
    if (!cluster) continue;
    const failed = serviceReply?.[0] ?? routeReply?.[0];
    if (failed) {
      unreadable(warnings, name, failed.message);
      changed ||= clusters.delete(name);
      continue;
    }
    const values = { services: serviceReply?.[1], routes: routeReply?.[1] };
    const records = withNamedRecords(name, cluster.records, { services, routes }, values, warnings);
    clusters.set(name, withRecords(cluster, records, lastChangeId));
    changed = true;
  }
  for (const [name, reason] of plan.reloads) {
    const previous = clusters.get(name);
    const result = readFullCluster(name, replies.slice(at, at + FULL_CLUSTER_COMMANDS), previous, warnings);
    at += FULL_CLUSTER_COMMANDS;
    if ("unreadable" in result) {
      unreadable(warnings, name, result.unreadable);
      changed ||= clusters.delete(name);
      continue;
    }
    readable(warnings, name);
    if (result.state) {
      clusters.set(name, result.state);
      absent.delete(name);
      notes.push({ message: "cluster read whole", cluster: name, reason });
    } else {
      absent.add(name);
    }
    changed ||= result.state !== undefined;
  }
  return { state: { clusters, absent, scanCursor: plan.scanCursor }, changed, notes };
}
