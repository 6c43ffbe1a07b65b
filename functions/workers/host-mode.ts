import { PersistentMap } from "../../lib/persistent-map.js";
import type { WarnOnce } from "../../lib/warn-once.js";
import { clusterKeys } from "../../store/keys.js";
import { lastEntryId, STREAM_START_ID } from "../../store/redis/streams.js";
import type { ClusterView } from "../../store/store.js";
import { discoveryCommands, readDiscovery } from "./delta-discovery.js";
import { entriesAfter, streamEntries } from "./delta-refresh.js";
import type { Command, Reply } from "./delta-state.js";

/**
 * Host mode of a Workers isolate (pure: commands out, replies in): when the store is larger than the host
 * budget (host-budget.ts) the isolate holds only the hosts it was asked for, each read by the cold read
 * (delta-cold.ts), and follows the store by its change streams' positions alone. A refresh is one round trip:
 * the registry, a SCAN step, and per cluster its stream after the position, its last entry and its lease. When
 * nothing changed that is all; when something did, the held hosts are read again from the new positions.
 */

export interface StreamPosition {
  /** The last change entry seen (STREAM_START_ID for an empty stream). */
  readonly lastChangeId: string;
  readonly stale: boolean;
}

export interface HostModeState {
  readonly positions: ReadonlyMap<string, StreamPosition>;
  readonly scanCursor: string;
}

/**
 * Per cluster: its last change entry, its lease, and what Redis estimates its two hashes take (MEMORY
 * USAGE): how the isolate decides whether the whole store fits its budget without reading it.
 */
export function sizeCommands(prefix: string, clusters: readonly string[]): Command[] {
  return clusters.flatMap((name): Command[] => {
    const keys = clusterKeys(prefix, name);
    return [
      ["xrevrange", keys.changes, "+", "-", "COUNT", "1"],
      ["exists", keys.lease],
      ["memory", "usage", keys.routes],
      ["memory", "usage", keys.services],
    ];
  });
}

/** The replies of sizeCommands: each cluster's position and the store's estimated bytes. */
export function readSizes(
  clusters: readonly string[],
  replies: readonly Reply[],
): { readonly positions: Map<string, StreamPosition>; readonly bytes: number } {
  const positions = new Map<string, StreamPosition>();
  let bytes = 0;
  clusters.forEach((name, index) => {
    const [last, lease, routes, services] = replies.slice(index * 4, index * 4 + 4);
    positions.set(name, {
      lastChangeId: lastEntryId(last?.[1]) ?? STREAM_START_ID,
      stale: lease?.[1] !== 1,
    });
    for (const reply of [routes, services]) if (typeof reply?.[1] === "number") bytes += reply[1];
  });
  return { positions, bytes };
}

export function hostRefreshCommands(prefix: string, state: HostModeState): Command[] {
  const commands = discoveryCommands(prefix, state.scanCursor);
  for (const [name, position] of state.positions) {
    const keys = clusterKeys(prefix, name);
    commands.push(
      ["xrange", keys.changes, position.lastChangeId, "+", "COUNT", "2"],
      ["xrevrange", keys.changes, "+", "-", "COUNT", "1"],
      ["exists", keys.lease],
    );
  }
  return commands;
}

export interface HostRefresh {
  readonly state: HostModeState;
  /** Why the held hosts must be read again; undefined when nothing changed. */
  readonly changed: string | undefined;
}

/** The replies of hostRefreshCommands(prefix, state), in order. */
export function readHostRefresh(
  prefix: string,
  state: HostModeState,
  replies: readonly Reply[],
  warnings: WarnOnce,
): HostRefresh {
  const discovered = readDiscovery(prefix, replies.slice(0, 2), warnings);
  const positions = new Map<string, StreamPosition>();
  let changed: string | undefined;
  let at = 2;
  for (const [name, position] of state.positions) {
    const [range, last, lease] = replies.slice(at, at + 3);
    at += 3;
    const failed = [range, last, lease].find((reply) => reply?.[0])?.[0];
    if (failed) changed ??= `cluster ${name} unreadable: ${failed.message}`;
    const fresh = entriesAfter(streamEntries(range?.[1]), position.lastChangeId);
    if (fresh === undefined || fresh.length > 0) changed ??= `cluster ${name} changed`;
    const stale = lease?.[1] !== 1;
    if (stale !== position.stale) changed ??= `cluster ${name} lease changed`;
    const lastChangeId = failed ? position.lastChangeId : (lastEntryId(last?.[1]) ?? STREAM_START_ID);
    positions.set(name, { lastChangeId, stale });
  }
  for (const name of discovered.names) {
    if (!positions.has(name)) {
      changed ??= `cluster ${name} discovered`;
      positions.set(name, { lastChangeId: STREAM_START_ID, stale: true });
    }
  }
  return { state: { positions, scanCursor: discovered.scanCursor }, changed };
}

type ValueOf<M> = M extends ReadonlyMap<string, infer V> ? V : never;

/**
 * The views of every held host merged per cluster (one host's records are a subset of its cluster's, so
 * where two hosts hold the same record it is the same record), sorted by name as a snapshot's clusters are.
 */
export function mergeHostViews(hosts: Iterable<readonly ClusterView[]>): ClusterView[] {
  const merged = new Map<
    string,
    {
      stale: boolean;
      servicesV2: [string, ValueOf<ClusterView["servicesV2"]>][];
      services: [string, ValueOf<ClusterView["services"]>][];
      routes: [string, ValueOf<ClusterView["routes"]>][];
    }
  >();
  for (const views of hosts) {
    for (const view of views) {
      let cluster = merged.get(view.name);
      if (!cluster) {
        cluster = { stale: view.stale, servicesV2: [], services: [], routes: [] };
        merged.set(view.name, cluster);
      }
      cluster.servicesV2.push(...view.servicesV2);
      cluster.services.push(...view.services);
      cluster.routes.push(...view.routes);
    }
  }
  return [...merged.keys()].sort().flatMap((name) => {
    const cluster = merged.get(name);
    if (!cluster) return [];
    return [
      {
        name,
        stale: cluster.stale,
        servicesV2: PersistentMap.from(cluster.servicesV2),
        services: PersistentMap.from(cluster.services),
        routes: PersistentMap.from(cluster.routes),
      },
    ];
  });
}
