import type { Logger } from "../../lib/logger.js";
import type { WarnOnce } from "../../lib/warn-once.js";
import { type ClusterState, readable, unreadable } from "../../store/cluster-state.js";
import type { ClusterHeartbeat, ClusterView } from "../../store/store.js";
import { coldIndexCommands, coldRecordCommands, readColdIndex, readColdRecords } from "./delta-cold.js";
import { discoveryCommands, readDiscovery } from "./delta-discovery.js";
import {
  applyFollowUp,
  followUpCommands,
  planRefresh,
  type RefreshOutcome,
  refreshCommands,
} from "./delta-refresh.js";
import {
  EMPTY_STATE,
  FULL_CLUSTER_COMMANDS,
  fullClusterCommands,
  type Reply,
  type RunPipeline,
  readFullCluster,
  type StoreState,
} from "./delta-state.js";
import {
  type HostModeState,
  type HostRefresh,
  hostRefreshCommands,
  readHostRefresh,
  readSizes,
  sizeCommands,
} from "./host-mode.js";

/**
 * The Workers isolate's store reads, each over a connection of its own opened by `connect` and closed before
 * it resolves (a socket cannot outlive the request that opened it in workerd). On standalone Redis each step
 * is one pipeline, so one round trip:
 * - refresh: 1 round trip when nothing changed, 2 when something did (delta-refresh.ts);
 * - cold: 3 round trips for one host (delta-cold.ts);
 * - full: discovery, then every cluster whole: 2 round trips (more only while a large keyspace is scanned).
 */
export interface DeltaReader {
  full(previous: StoreState): Promise<StoreState>;
  refresh(state: StoreState): Promise<{ readonly state: StoreState; readonly changed: boolean }>;
  /**
   * The views a request for `host` needs with their clusters' heartbeat records, or why the host index cannot
   * say (then read everything).
   */
  cold(host: string): Promise<ColdRead>;
  /** How large the store is (Redis' estimate of its hashes) and where each change stream is: 2 round trips. */
  sizes(): Promise<{ readonly bytes: number; readonly state: HostModeState }>;
  /** Host mode's refresh (host-mode.ts): 1 round trip. */
  hostRefresh(state: HostModeState): Promise<HostRefresh>;
}

/** What the cold read of one host gives (DeltaReader.cold). */
export type ColdRead =
  | {
      readonly views: ClusterView[];
      readonly heartbeats: ReadonlyMap<string, ClusterHeartbeat>;
      /** The serialized size of the records read: what holding them costs (host-budget.ts). */
      readonly bytes: number;
    }
  | { readonly incomplete: string };

export interface PipelineConnection {
  readonly run: RunPipeline;
  close(): void;
}

export interface DeltaReaderOptions {
  readonly prefix: string;
  readonly connect: () => Promise<PipelineConnection>;
  readonly warnings: WarnOnce;
  readonly logger: Logger;
}

/** The DeltaReader over pipelined Redis connections (read-connection.ts). */
export class PipelinedDeltaReader implements DeltaReader {
  readonly #options: DeltaReaderOptions;

  constructor(options: DeltaReaderOptions) {
    this.#options = options;
  }

  full(previous: StoreState): Promise<StoreState> {
    const { prefix, warnings } = this.#options;
    return this.#withConnection(async (run) => {
      const names = [...(await this.#discoverAll(run, previous))].sort();
      const replies = await run(names.flatMap((name) => fullClusterCommands(prefix, name)));
      const clusters = new Map<string, ClusterState>();
      const absent = new Set<string>();
      names.forEach((name, index) => {
        const own = replies.slice(index * FULL_CLUSTER_COMMANDS, (index + 1) * FULL_CLUSTER_COMMANDS);
        const result = readFullCluster(name, own, previous.clusters.get(name), warnings);
        if ("unreadable" in result) {
          unreadable(warnings, name, result.unreadable);
          return;
        }
        readable(warnings, name);
        if (result.state) clusters.set(name, result.state);
        else absent.add(name);
      });
      return { ...EMPTY_STATE, clusters, absent };
    });
  }

  refresh(state: StoreState): Promise<RefreshOutcome> {
    const { prefix, warnings, logger } = this.#options;
    return this.#withConnection(async (run) => {
      const plan = planRefresh(prefix, state, await run(refreshCommands(prefix, state)), warnings);
      const followUp = followUpCommands(prefix, plan);
      const outcome = applyFollowUp(plan, followUp.length > 0 ? await run(followUp) : [], warnings);
      for (const note of outcome.notes)
        logger.info(note.message, { cluster: note.cluster, reason: note.reason });
      return outcome;
    });
  }

  cold(host: string): Promise<ColdRead> {
    const { prefix, warnings } = this.#options;
    return this.#withConnection(async (run) => {
      const { names } = readDiscovery(prefix, await run(discoveryCommands(prefix, "0")), warnings);
      const index = readColdIndex(names, host, await run(coldIndexCommands(prefix, names, host)));
      if (index.incomplete !== undefined) return { incomplete: index.incomplete };
      const commands = coldRecordCommands(prefix, index);
      const replies = commands.length > 0 ? await run(commands) : [];
      const views = readColdRecords(index, replies, warnings);
      if (!views) return { incomplete: "a record could not be read" };
      const heartbeats = new Map<string, ClusterHeartbeat>();
      for (const cluster of index.clusters)
        if (cluster.heartbeat) heartbeats.set(cluster.name, cluster.heartbeat);
      return { views, heartbeats, bytes: bytesOf(replies) };
    });
  }

  sizes(): Promise<{ readonly bytes: number; readonly state: HostModeState }> {
    const { prefix, warnings } = this.#options;
    return this.#withConnection(async (run) => {
      const { names, scanCursor } = readDiscovery(
        prefix,
        await run(discoveryCommands(prefix, "0")),
        warnings,
      );
      const { positions, bytes } = readSizes(names, await run(sizeCommands(prefix, names)));
      return { bytes, state: { positions, scanCursor } };
    });
  }

  hostRefresh(state: HostModeState): Promise<HostRefresh> {
    const { prefix, warnings } = this.#options;
    return this.#withConnection(async (run) =>
      readHostRefresh(prefix, state, await run(hostRefreshCommands(prefix, state)), warnings),
    );
  }

  /** `work` over a connection of its own, closed before this resolves. */
  async #withConnection<T>(work: (run: RunPipeline) => Promise<T>): Promise<T> {
    const connection = await this.#options.connect();
    try {
      return await work(connection.run);
    } finally {
      connection.close();
    }
  }

  /**
   * Every cluster name the registry and a whole SCAN sweep give, with those known before. A large shared
   * keyspace takes more SCAN steps; a store of edgeslice keys only takes one.
   */
  async #discoverAll(run: RunPipeline, previous: StoreState): Promise<Set<string>> {
    const { prefix, warnings } = this.#options;
    let discovered = readDiscovery(prefix, await run(discoveryCommands(prefix, "0")), warnings);
    const names = new Set([...discovered.names, ...previous.clusters.keys()]);
    while (discovered.scanCursor !== "0") {
      discovered = readDiscovery(
        prefix,
        await run(discoveryCommands(prefix, discovered.scanCursor)),
        warnings,
      );
      for (const name of discovered.names) names.add(name);
    }
    return names;
  }
}

/** The serialized size of the records the cold read's HMGETs brought: what holding them costs. */
function bytesOf(replies: readonly Reply[]): number {
  let bytes = 0;
  for (const [, values] of replies)
    if (Array.isArray(values))
      for (const value of values) if (typeof value === "string") bytes += value.length;
  return bytes;
}
