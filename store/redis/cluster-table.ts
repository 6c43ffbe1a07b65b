import type { Cluster, Redis } from "ioredis";
import type { Logger } from "../../lib/logger.js";
import type { WarnOnce } from "../../lib/warn-once.js";
import type { ChangeRate } from "../change-rate.js";
import { adoptRead, readable, unreadable, viewsOf } from "../cluster-state.js";
import type { RecordBudget } from "../record-budget.js";
import type { ClusterHeartbeat, Snapshot } from "../store.js";
import { type BudgetedCluster, loadClusterWithin } from "./budgeted-load.js";
import { readHeartbeats } from "./heartbeats.js";
import { readRunId } from "./run-id.js";
import { isReplyError } from "./snapshot.js";

/** What the snapshot source's pieces read Redis with (source.ts wires them). */
export interface SourceReads {
  readonly redis: Redis | Cluster;
  readonly prefix: string;
  readonly logger: Logger;
  /** Malformed records and keys are reported once while they last, not on every reload (lib/warn-once.ts). */
  readonly warnings: WarnOnce;
  readonly now: () => number;
  /** What the router holds of one cluster at most (store/record-budget.ts). */
  readonly budget: RecordBudget;
  /** Whether a cluster's records are read at all (CLUSTER_GRANTS lists it); undefined: every cluster's are. */
  readonly granted?: ((cluster: string) => boolean) | undefined;
  /** Which clusters there are (cluster-discovery.ts). */
  readonly discovery: { names(rescan?: boolean): Promise<string[]> };
  /** The rate each cluster's change entries are applied at (change-rate.ts). */
  readonly rate: ChangeRate;
}

/**
 * The clusters the router knows and the immutable snapshot built from them: whole loads of the store or of one
 * cluster, and publishing a new snapshot after any change (lease-refresh.ts and change-application.ts change
 * the clusters too, then publish).
 */
export class ClusterTable {
  clusters = new Map<string, BudgetedCluster>();
  snapshot: Snapshot | undefined;
  heartbeats: ReadonlyMap<string, ClusterHeartbeat> = new Map();
  /** The Redis instance the positions were read from: another one means every position is void. */
  runId: string | undefined;
  lastLoadAt: number | undefined;
  readonly #reads: SourceReads;
  readonly #published: () => void;

  /** `published` runs after each new snapshot (the change feeds follow the clusters it names). */
  constructor(reads: SourceReads, published: () => void) {
    this.#reads = reads;
    this.#published = published;
  }

  publish(): void {
    this.snapshot = { version: (this.snapshot?.version ?? 0) + 1, clusters: viewsOf(this.clusters) };
    this.#published();
  }

  /**
   * One cluster read whole within its budget (budgeted-load.ts); undefined (reported once) when Redis cannot
   * read its keys as their types (a WRONGTYPE reply: something else was written under its name), or gone.
   * Connection errors still reject (the store as a whole is unreachable).
   */
  async load(name: string): Promise<BudgetedCluster | undefined> {
    const { redis, prefix, warnings, budget, granted } = this.#reads;
    try {
      const loaded = await loadClusterWithin(redis, prefix, name, {
        budget,
        granted: granted?.(name) ?? true,
        warnings,
      });
      readable(warnings, name);
      return this.#adopt(loaded);
    } catch (error) {
      if (!isReplyError(error)) throw error;
      unreadable(warnings, name, error.message, error);
      return undefined;
    }
  }

  async reloadAll(): Promise<void> {
    const { redis, prefix, logger, warnings, now } = this.#reads;
    const [id, names] = await Promise.all([readRunId(redis), this.#reads.discovery.names(true)]);
    const known = [...new Set([...this.clusters.keys(), ...names])];
    // The heartbeat records with the first load: proximity steering reads each cluster's place from them.
    const [loaded, beats] = await Promise.all([
      Promise.all(known.map((name) => this.load(name))),
      readHeartbeats(redis, prefix, known, warnings),
    ]);
    this.heartbeats = beats;
    const next = new Map<string, BudgetedCluster>();
    known.forEach((name, index) => {
      const state = loaded[index];
      if (state) next.set(name, state);
    });
    this.clusters = next;
    this.runId = id;
    this.lastLoadAt = now();
    this.publish();
    logger.info("store loaded", { clusters: next.size, version: this.snapshot?.version });
  }

  async reloadCluster(name: string, reason: string): Promise<void> {
    this.#reads.logger.info("reloading cluster", { cluster: name, reason });
    const state = await this.load(name);
    if (state) this.clusters.set(name, state);
    else this.clusters.delete(name);
    this.publish();
  }

  /** A cluster whose heartbeat vanished keeps its last records, marked stale: fail static, never a blank store. */
  #adopt(loaded: BudgetedCluster): BudgetedCluster | undefined {
    return adoptRead(loaded, this.clusters.get(loaded.view.name));
  }
}
