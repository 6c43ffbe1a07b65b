import type { WarnOnce } from "../lib/warn-once.js";
import type { BudgetReport, HeldRecords } from "./record-budget.js";
import type { ClusterHeartbeat, ClusterView } from "./store.js";
import { type ClusterRecords, clusterView } from "./stored-records.js";

/**
 * What a store reader knows of one cluster, and the decisions every reader makes about it, pure: the Node
 * reader (store/redis/cluster-table.ts, lease-refresh.ts, change-application.ts) and the Workers reader
 * (functions/workers/delta-*.ts) read Redis their own way (a connection held open and change feeds; one
 * pipelined connection per request) and hand what they read to these transitions, so both runtimes keep,
 * lose, regain and update a cluster alike.
 */
export interface ClusterState {
  readonly view: ClusterView;
  /** What the view was built from: a change batch updates it and builds the view again. */
  readonly records: ClusterRecords;
  /** Id of the last change entry applied (STREAM_START_ID for an empty stream): the next read starts there. */
  readonly lastChangeId: string;
  /**
   * The records were read while the heartbeat key existed. False once it went missing (the store lost the
   * cluster's keys): records kept from before (fail static) may include Services deleted meanwhile, which a
   * re-push never announces, so they stay, marked stale, until the heartbeat is back and the cluster is read
   * whole again.
   */
  readonly registered: boolean;
  /**
   * What the heartbeat record said when last read (the cluster's place, which proximity steering measures to;
   * kept out of the view: it changes every beat). The Workers reader keeps it here; the Node reader keeps every
   * cluster's in one map beside the table. Undefined when it did not decode.
   */
  readonly heartbeat?: ClusterHeartbeat | undefined;
  /**
   * The sizes of the records held within the cluster's budget (store/record-budget.ts), changed in place by
   * each batch: the Node reader's. The Workers reader holds what a request asks for, under its host budget.
   */
  readonly held?: HeldRecords | undefined;
}

/** Why a cluster whose heartbeat came back is read whole (logged by both readers). */
export const REGAINED = "its heartbeat is back after the store lost it";

/**
 * A cluster read whole, against what was known of it: the state read when its heartbeat key was there; when it
 * was not, nothing if the cluster was unknown, else the last records kept, stale (never a blank store).
 */
export function adoptRead<State extends ClusterState>(
  read: State,
  previous: State | undefined,
): State | undefined {
  if (read.registered) return read;
  return previous && lostCluster(previous, read.lastChangeId);
}

/** A cluster whose heartbeat key is gone keeps its last records, stale and unregistered (fail static). */
export function lostCluster<State extends ClusterState>(
  previous: State,
  lastChangeId = previous.lastChangeId,
): State {
  const view = previous.view.stale ? previous.view : { ...previous.view, stale: true };
  return { ...previous, view, lastChangeId, registered: false };
}

/** What one look at a known cluster's heartbeat and lease keys found. */
export interface KeysSeen {
  readonly heartbeat: boolean;
  readonly lease: boolean;
}

export type Observation<State extends ClusterState> =
  /** The heartbeat key is gone: the cluster is kept, stale (lostCluster). */
  | { readonly kind: "lost"; readonly state: State; readonly changed: boolean }
  /** The heartbeat key is back after it was lost: read the cluster whole again (REGAINED). */
  | { readonly kind: "regained"; readonly state: State; readonly changed: false }
  /** Registered: stale exactly while its lease key is missing. */
  | { readonly kind: "seen"; readonly state: State; readonly changed: boolean };

/**
 * A known cluster after a look at its heartbeat and lease keys (the Node reader's periodic refresh, the Workers
 * reader's every refresh). `changed`: the view or the registration differ, so the snapshot must be built again.
 */
export function observeCluster<State extends ClusterState>(state: State, seen: KeysSeen): Observation<State> {
  if (!seen.heartbeat) {
    const lost = lostCluster(state);
    return { kind: "lost", state: lost, changed: lost.view !== state.view || state.registered };
  }
  if (!state.registered) return { kind: "regained", state, changed: false };
  const stale = !seen.lease;
  if (stale === state.view.stale) return { kind: "seen", state, changed: false };
  return { kind: "seen", state: { ...state, view: { ...state.view, stale } }, changed: true };
}

/**
 * The cluster after a change batch re-read `records`: its view built again from them (reusing what the
 * previous view built for what did not change), at `lastChangeId`; `budget` is the Node reader's report.
 */
export function withRecords<State extends ClusterState>(
  state: State,
  records: ClusterRecords,
  lastChangeId: string,
  budget?: BudgetReport,
): State {
  const rebuilt = clusterView(state.view.name, state.view.stale, records, state);
  const view = budget === undefined ? rebuilt : { ...rebuilt, budget };
  return { ...state, records, view, lastChangeId };
}

/** The views of every cluster, sorted by name (code units): the clusters of the snapshot a router serves. */
export function viewsOf(clusters: ReadonlyMap<string, ClusterState>): ClusterView[] {
  return [...clusters.values()].map((state) => state.view).sort(byName);
}

/** Each cluster's last heartbeat record kept in its state. */
export function heartbeatsOf(clusters: ReadonlyMap<string, ClusterState>): Map<string, ClusterHeartbeat> {
  const heartbeats = new Map<string, ClusterHeartbeat>();
  for (const [name, cluster] of clusters) if (cluster.heartbeat) heartbeats.set(name, cluster.heartbeat);
  return heartbeats;
}

/**
 * A cluster whose keys Redis refused to read as their types (WRONGTYPE: something else was written under its
 * name) is left out, reported once while it stays so; `readable` ends the report.
 */
export function unreadable(
  warnings: WarnOnce,
  cluster: string,
  detail: string,
  error: unknown = detail,
): void {
  warnings.warn(`cluster ${cluster}`, detail, "skipping a cluster whose keys cannot be read", {
    cluster,
    error,
  });
}

export function readable(warnings: WarnOnce, cluster: string): void {
  warnings.clear(`cluster ${cluster}`);
}

function byName(a: ClusterView, b: ClusterView): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
