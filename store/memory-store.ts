import { decodeServiceRecord, type ServiceRecord, serializeServiceRecord } from "./records.js";
import {
  assertOwnRecord,
  type ClusterView,
  type ClusterWriter,
  type Snapshot,
  type SnapshotSource,
  type StoreChange,
} from "./store.js";

interface ClusterState {
  readonly records: Map<string, string>;
  leaseUntil: number;
}

/**
 * The in-memory store: same semantics as the Redis layout (serialised records, per-cluster lease,
 * change notifications), for the local all-in-one and unit tests. Unlike Redis it lists a cluster from its
 * first `writer()` call, before any heartbeat (stale until one).
 *
 * @example
 * const store = new MemoryStore();
 * const east = store.writer("east");
 * await east.heartbeat({ holder: "local", leaseMs: 60_000, at: Date.now() });
 * await east.put(record);
 * store.current(); // the router's view: east, fresh, with the record
 */
export class MemoryStore implements SnapshotSource {
  readonly #clusters = new Map<string, ClusterState>();
  readonly #listeners = new Set<(change: StoreChange) => void>();
  readonly #now: () => number;
  #version = 0;
  #cached: { snapshot: Snapshot; staleMask: string } | undefined;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  writer(cluster: string): ClusterWriter {
    const state = this.#state(cluster);
    const notify = (service: string, op: StoreChange["op"]) => this.#changed({ cluster, service, op });
    return {
      cluster,
      put: async (record: ServiceRecord) => {
        assertOwnRecord(cluster, record);
        state.records.set(record.service, serializeServiceRecord(record));
        notify(record.service, "put");
      },
      remove: async (service: string) => {
        if (state.records.delete(service)) notify(service, "delete");
      },
      load: async () => new Map(state.records),
      heartbeat: async ({ leaseMs, ifRegistered }) => {
        if (ifRegistered && state.leaseUntil === 0) return false;
        state.leaseUntil = this.#now() + leaseMs;
        return true;
      },
    };
  }

  /** Called after every change; returns the unsubscribe function. */
  subscribe(listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  current(): Snapshot {
    const now = this.#now();
    const staleMask = [...this.#clusters.values()].map((c) => (c.leaseUntil <= now ? "1" : "0")).join("");
    if (
      this.#cached &&
      this.#cached.snapshot.version === this.#version &&
      this.#cached.staleMask === staleMask
    ) {
      return this.#cached.snapshot;
    }
    const clusters: ClusterView[] = [];
    for (const [name, state] of this.#clusters) {
      const services = new Map<string, ServiceRecord>();
      for (const [service, raw] of state.records) {
        const decoded = decodeServiceRecord(raw);
        if (decoded.ok) services.set(service, decoded.value);
      }
      clusters.push({ name, stale: state.leaseUntil <= now, services });
    }
    const version = this.#cached ? this.#cached.snapshot.version + 1 : 1;
    this.#version = version;
    const snapshot: Snapshot = { version, clusters };
    this.#cached = { snapshot, staleMask };
    return snapshot;
  }

  #state(cluster: string): ClusterState {
    let state = this.#clusters.get(cluster);
    if (!state) {
      state = { records: new Map(), leaseUntil: 0 };
      this.#clusters.set(cluster, state);
    }
    return state;
  }

  #changed(change: StoreChange): void {
    this.#version++;
    for (const listener of this.#listeners) listener(change);
  }
}
