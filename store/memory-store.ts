import { byCodeUnits } from "../lib/code-unit-order.js";
import type { BackendTlsReader } from "./backend-tls.js";
import type { CertificateReader } from "./certificates.js";
import type { ChangeKind } from "./changes.js";
import { hostIndexMembers } from "./keys.js";
import {
  memoryBackendTlsWriter,
  memoryCertificateWriter,
  VersionedHash,
  versionedHashReader,
} from "./memory-hashes.js";
import { type ClusterPlace, placeFields } from "./places.js";
import { type ServiceRecord, serializeServiceRecord } from "./records.js";
import { decodeRoute } from "./routes.js";
import { type ServiceRecordV2, serializeServiceRecordV2 } from "./services.js";
import {
  assertOwnRecord,
  type ClusterHeartbeat,
  type ClusterView,
  type ClusterWriter,
  type FenceOptions,
  FenceRefusedError,
  type Snapshot,
  type SnapshotSource,
  type StoreChange,
  serializeRoute,
  type WriterFence,
} from "./store.js";
import { type DecodedCluster, decodedAfterChanges } from "./stored-delta.js";

interface Expiring {
  readonly holder: string;
  readonly until: number;
}

interface ClusterState {
  /** The `services` hash. */
  readonly records: Map<string, string>;
  /** The `routes` hash. */
  readonly routes: Map<string, string>;
  /** The host index (keys.ts hostIndexMembers), kept as the Redis writer keeps it. */
  readonly hosts: Set<string>;
  leaseUntil: number;
  /** The heartbeat record was written (Redis: the heartbeat key exists). */
  registered: boolean;
  /** What the last heartbeat record said. */
  heartbeat: ClusterHeartbeat | undefined;
  fence: Expiring | undefined;
  claim: Expiring | undefined;
  /** The `certificates` hash and its version counter. */
  readonly certificates: VersionedHash;
  /** The `client-validations` hash (client-validations.ts); its writes bump the certificates' version too. */
  readonly clientValidations: Map<string, string>;
  /** The `backend-tls` hash and its version counter. */
  readonly backendTls: VersionedHash;
  /** What the last snapshot decoded; the records changed since are decoded again, the rest kept. */
  decoded: DecodedCluster | undefined;
  readonly dirtyServices: Set<string>;
  readonly dirtyRoutes: Set<string>;
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
export class MemoryStore implements SnapshotSource, CertificateReader {
  readonly #clusters = new Map<string, ClusterState>();
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
    const state = this.#state(cluster);
    const notify = (id: string, op: StoreChange["op"], kind: ChangeKind = "service") =>
      this.#changed({ cluster, kind, id, service: id, op });
    const indexed = (raw: string | undefined) => {
      const decoded = raw === undefined ? undefined : decodeRoute(raw);
      return decoded?.ok ? hostIndexMembers(decoded.value) : [];
    };
    const replaceRoute = (id: string, raw: string | undefined) => {
      for (const member of indexed(state.routes.get(id))) state.hosts.delete(member);
      for (const member of indexed(raw)) state.hosts.add(member);
      if (raw === undefined) state.routes.delete(id);
      else state.routes.set(id, raw);
      notify(id, raw === undefined ? "delete" : "put", "route");
    };
    const live = (entry: Expiring | undefined) => (entry && entry.until > this.#now() ? entry : undefined);
    let claimant: string | undefined;
    /** The fence check of every write: take when free, renew when ours, else refuse. */
    const fenced = () => {
      if (!fence) return;
      const held = live(state.fence);
      if (held && held.holder !== fence.holder) throw new FenceRefusedError(cluster, held.holder);
      state.fence = { holder: fence.holder, until: this.#now() + fence.ttlMs };
      const claim = live(state.claim);
      claimant = claim && claim.holder !== fence.holder ? claim.holder : undefined;
    };
    const writerFence: WriterFence | undefined = fence && {
      holder: fence.holder,
      ttlMs: fence.ttlMs,
      get claimant() {
        return claimant;
      },
      acquire: async (claimMs) => {
        const held = live(state.fence);
        if (held && held.holder !== fence.holder) {
          if (claimMs > 0) state.claim = { holder: fence.holder, until: this.#now() + claimMs };
          return { held: false, holder: held.holder };
        }
        if (live(state.claim)?.holder === fence.holder) state.claim = undefined;
        fenced();
        return { held: true };
      },
      holderNow: async () => live(state.fence)?.holder,
      release: async () => {
        if (live(state.fence)?.holder !== fence.holder) return false;
        state.fence = undefined;
        return true;
      },
    };
    return {
      cluster,
      ...(writerFence ? { fence: writerFence } : {}),
      put: async (record: ServiceRecord) => {
        assertOwnRecord(cluster, record);
        fenced();
        state.records.set(record.service, serializeServiceRecord(record));
        notify(record.service, "put");
      },
      remove: async (service: string) => {
        fenced();
        if (state.records.delete(service)) notify(service, "delete");
      },
      putService: async (record: ServiceRecordV2) => {
        assertOwnRecord(cluster, record);
        fenced();
        state.records.set(record.service, serializeServiceRecordV2(record));
        state.routes.delete(record.service);
        notify(record.service, "put");
      },
      removeService: async (service: string) => {
        fenced();
        state.routes.delete(service);
        if (state.records.delete(service)) notify(service, "delete");
      },
      putRoute: async (route) => {
        const raw = serializeRoute(route);
        fenced();
        replaceRoute(route.id, raw);
      },
      removeRoute: async (id: string) => {
        fenced();
        if (state.routes.has(id)) replaceRoute(id, undefined);
      },
      load: async () => new Map(state.records),
      loadAll: async () => ({ services: new Map(state.records), routes: new Map(state.routes) }),
      certificates: memoryCertificateWriter(state.certificates, state.clientValidations, fenced),
      backendTls: memoryBackendTlsWriter(state.backendTls, fenced),
      heartbeat: async ({ holder, at, leaseMs, ifRegistered, apiserverUnreachableSince, services }) => {
        fenced();
        // Redis renews its lease key either way, but lists no cluster without its heartbeat record; this
        // store lists every cluster, so an unregistered one stays stale instead.
        if (ifRegistered && !state.registered) return false;
        state.registered = true;
        state.heartbeat = { holder, at, apiserverUnreachableSince, services, ...placeFields(place) };
        state.leaseUntil = this.#now() + leaseMs;
        return true;
      },
    };
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

  *#hashes(pick: (state: ClusterState) => VersionedHash): Generator<[string, VersionedHash]> {
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
  #decoded(name: string, state: ClusterState): DecodedCluster {
    const next = decodedAfterChanges(name, state, state.decoded, state.dirtyServices, state.dirtyRoutes);
    state.dirtyServices.clear();
    state.dirtyRoutes.clear();
    state.decoded = next;
    return next;
  }

  #state(cluster: string): ClusterState {
    let state = this.#clusters.get(cluster);
    if (!state) {
      state = {
        records: new Map(),
        routes: new Map(),
        hosts: new Set(),
        leaseUntil: 0,
        registered: false,
        heartbeat: undefined,
        fence: undefined,
        claim: undefined,
        certificates: new VersionedHash(),
        clientValidations: new Map(),
        backendTls: new VersionedHash(),
        decoded: undefined,
        dirtyServices: new Set(),
        dirtyRoutes: new Set(),
      };
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
