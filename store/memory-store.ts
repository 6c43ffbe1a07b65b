import { byCodeUnits } from "../lib/code-unit-order.js";
import type { BackendTlsReader } from "./backend-tls.js";
import type { CertificateReader } from "./certificates.js";
import { type VersionedHash, versionedHashReader } from "./memory-hashes.js";
import { emptyMemoryCluster, type MemoryCluster, MemoryClusterWriter } from "./memory-writer.js";
import type { ClusterPlace } from "./places.js";
import type {
  ClusterHeartbeat,
  ClusterView,
  ClusterWriter,
  FenceOptions,
  Snapshot,
  SnapshotSource,
  StoreChange,
} from "./store.js";
import { type DecodedCluster, decodedAfterChanges } from "./stored-delta.js";

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
export class MemoryStore implements SnapshotSource, CertificateReader {
  readonly #clusters = new Map<string, MemoryCluster>();
  readonly #listeners = new Set<(change: StoreChange) => void>();
  readonly #now: () => number;
  #version = 0;
  #cached: { snapshot: Snapshot; staleMask: string } | undefined;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** With `fence`, a fenced writer with the Redis writer's semantics (store.ts ClusterWriter.fence). */
  /** `place`: where the cluster runs, written into its heartbeat record as the Redis writer's option does. */
  writer(cluster: string, fence?: FenceOptions, place?: ClusterPlace): ClusterWriter {
    const hooks = { now: () => this.#now(), changed: (change: StoreChange) => this.#changed(change) };
    return new MemoryClusterWriter(cluster, this.#state(cluster), hooks, fence, place);
  }

  heartbeats(): Map<string, ClusterHeartbeat> {
    const heartbeats = new Map<string, ClusterHeartbeat>();
    for (const [name, state] of this.#clusters) if (state.heartbeat) heartbeats.set(name, state.heartbeat);
    return heartbeats;
  }

  /** The host index of `cluster`, sorted as Redis sorts a ZSET of equal scores (members are ASCII). */
  hostIndex(cluster: string): string[] {
    return [...(this.#clusters.get(cluster)?.hosts ?? [])].sort(byCodeUnits);
  }

  /** CertificateReader: clusters that ever wrote a certificate record, as the Redis layout lists them. */
  readonly #certificates = versionedHashReader(() => this.#hashes((state) => state.certificates));
  versions(): Promise<Map<string, string>> {
    return this.#certificates.versions();
  }

  records(cluster: string): Promise<Map<string, string>> {
    return this.#certificates.records(cluster);
  }

  /** The BackendTlsReader of this store: clusters that ever wrote a backend TLS record, and their hashes. */
  readonly backendTls: BackendTlsReader = versionedHashReader(() =>
    this.#hashes((state) => state.backendTls),
  );

  *#hashes(pick: (state: MemoryCluster) => VersionedHash): Generator<[string, VersionedHash]> {
    for (const [name, state] of this.#clusters) yield [name, pick(state)];
  }

  async clientValidations(cluster: string): Promise<Map<string, string>> {
    return new Map(this.#clusters.get(cluster)?.clientValidations ?? []);
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
      const decoded = this.#decoded(name, state);
      const stale = state.leaseUntil <= now;
      clusters.push(decoded.view.stale === stale ? decoded.view : { ...decoded.view, stale });
    }
    const version = this.#cached ? this.#cached.snapshot.version + 1 : 1;
    this.#version = version;
    const snapshot: Snapshot = { version, clusters };
    this.#cached = { snapshot, staleMask };
    return snapshot;
  }

  /** The cluster decoded, only what changed since the last snapshot decoded again (stored-delta.ts). */
  #decoded(name: string, state: MemoryCluster): DecodedCluster {
    const next = decodedAfterChanges(name, state, state.decoded, state.dirtyServices, state.dirtyRoutes);
    state.dirtyServices.clear();
    state.dirtyRoutes.clear();
    state.decoded = next;
    return next;
  }

  #state(cluster: string): MemoryCluster {
    let state = this.#clusters.get(cluster);
    if (!state) {
      state = emptyMemoryCluster();
      this.#clusters.set(cluster, state);
    }
    return state;
  }

  #changed(change: StoreChange): void {
    this.#version++;
    const state = this.#clusters.get(change.cluster);
    // A service write also drops a version 1 route kept under its name (putService): both are read again.
    if (change.kind !== "route") state?.dirtyServices.add(change.id);
    state?.dirtyRoutes.add(change.id);
    for (const listener of this.#listeners) listener(change);
  }
}
