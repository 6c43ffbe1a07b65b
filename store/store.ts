import type { ChangeOp, ServiceRecord } from "./records.js";

/**
 * The sync side of the store: one instance per cluster, writing only that cluster's records. Implemented by
 * the Redis writer (redis/writer.ts) and by MemoryStore; test/store/store.case.ts holds both to one contract.
 */
export interface ClusterWriter {
  readonly cluster: string;
  /**
   * Atomically replaces the service's record and route and appends a `put` change entry. Rejects a record
   * of another cluster (assertOwnRecord), storing nothing.
   */
  put(record: ServiceRecord): Promise<void>;
  /** Atomically removes the service's record and route and appends a `delete` change entry. */
  remove(service: string): Promise<void>;
  /** Every stored record of this cluster as its serialised string, keyed by `ns/name`. */
  load(): Promise<Map<string, string>>;
  /**
   * Writes the heartbeat record and the lease that keeps this cluster fresh for `leaseMs`; resolves true.
   * With `ifRegistered`, the record is only replaced, never created, and the result is false when it was
   * missing. It has no TTL, so once written it goes missing only when the store lost it (a restart without
   * persistence, FLUSHALL, a Redis Cluster master restarting empty).
   */
  heartbeat(beat: { holder: string; leaseMs: number; at: number; ifRegistered?: boolean }): Promise<boolean>;
}

/** Throws unless `record` is one of `cluster`'s: a ClusterWriter stores its own cluster's records only. */
export function assertOwnRecord(cluster: string, record: ServiceRecord): void {
  if (record.cluster !== cluster) {
    throw new Error(`record of cluster "${record.cluster}" given to the writer of "${cluster}"`);
  }
}

/** What routers see of one cluster. */
export interface ClusterView {
  readonly name: string;
  /** The cluster's lease ran out: its sync went quiet. */
  readonly stale: boolean;
  /** Valid records only, keyed by `ns/name`; invalid ones were logged and skipped. */
  readonly services: ReadonlyMap<string, ServiceRecord>;
}

/**
 * An immutable view of the whole store. A new object (with a higher `version`) replaces it on any
 * change, so consumers can memoise derived indexes on object identity.
 */
export interface Snapshot {
  readonly version: number;
  readonly clusters: readonly ClusterView[];
}

/** How a router's view relates to the store, for healthz and metrics. */
export interface SourceStatus {
  /** The store answered on its last use. */
  readonly connected: boolean;
  /** When the in-memory view was last confirmed against the store (ms since epoch); undefined before. */
  readonly lastLoadAt: number | undefined;
  /** Version of the current snapshot, 0 before the first load. */
  readonly version: number;
}

/** Router side: the latest snapshot, or undefined when nothing was ever loaded. */
export interface SnapshotSource {
  current(): Snapshot | undefined | Promise<Snapshot | undefined>;
  /** Omitted by sources that cannot lose their store (MemoryStore). */
  status?(): SourceStatus;
}

export interface StoreChange {
  readonly cluster: string;
  readonly service: string;
  readonly op: ChangeOp;
}
