import type { BackendTlsWriter } from "./backend-tls.js";
import type { CertificateWriter } from "./certificates.js";
import type { ChangeKind } from "./changes.js";
import { hostIndexMembers } from "./keys.js";
import { memoryBackendTlsWriter, memoryCertificateWriter, VersionedHash } from "./memory-hashes.js";
import { type ClusterPlace, placeFields } from "./places.js";
import { type ServiceRecord, serializeServiceRecord } from "./records.js";
import { decodeRoute, type RouteRecord } from "./routes.js";
import { type ServiceRecordV2, serializeServiceRecordV2 } from "./services.js";
import {
  assertOwnRecord,
  type ClusterHeartbeat,
  type ClusterWriter,
  type FenceOptions,
  FenceRefusedError,
  type FenceStatus,
  type HeartbeatBeat,
  type StoreChange,
  type StoredRecords,
  serializeRoute,
  type WriterFence,
} from "./store.js";
import type { DecodedCluster } from "./stored-delta.js";

interface Expiring {
  readonly holder: string;
  readonly until: number;
}

/** One cluster's keys as MemoryStore keeps them (the Redis layout's hashes, sets and expiring keys). */
export interface MemoryCluster {
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

export function emptyMemoryCluster(): MemoryCluster {
  return {
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
}

/** What a writer asks of its MemoryStore: the clock, and to be told of every change. */
export interface MemoryStoreHooks {
  now(): number;
  changed(change: StoreChange): void;
}

/** The writer fence over a MemoryCluster's fence and claim, with the Redis scripts' semantics. */
class MemoryWriterFence implements WriterFence {
  readonly holder: string;
  readonly ttlMs: number;
  #claimant: string | undefined;
  readonly #cluster: string;
  readonly #state: MemoryCluster;
  readonly #now: () => number;

  constructor(cluster: string, state: MemoryCluster, fence: FenceOptions, now: () => number) {
    this.holder = fence.holder;
    this.ttlMs = fence.ttlMs;
    this.#cluster = cluster;
    this.#state = state;
    this.#now = now;
  }

  get claimant(): string | undefined {
    return this.#claimant;
  }

  async acquire(claimMs: number): Promise<FenceStatus> {
    const state = this.#state;
    const held = this.#live(state.fence);
    if (held && held.holder !== this.holder) {
      if (claimMs > 0) state.claim = { holder: this.holder, until: this.#now() + claimMs };
      return { held: false, holder: held.holder };
    }
    if (this.#live(state.claim)?.holder === this.holder) state.claim = undefined;
    this.check();
    return { held: true };
  }

  async holderNow(): Promise<string | undefined> {
    return this.#live(this.#state.fence)?.holder;
  }

  async release(): Promise<boolean> {
    if (this.#live(this.#state.fence)?.holder !== this.holder) return false;
    this.#state.fence = undefined;
    return true;
  }

  /** The fence check of every write: take when free, renew when ours, else refuse. */
  check(): void {
    const state = this.#state;
    const held = this.#live(state.fence);
    if (held && held.holder !== this.holder) throw new FenceRefusedError(this.#cluster, held.holder);
    state.fence = { holder: this.holder, until: this.#now() + this.ttlMs };
    const claim = this.#live(state.claim);
    this.#claimant = claim && claim.holder !== this.holder ? claim.holder : undefined;
  }

  #live(entry: Expiring | undefined): Expiring | undefined {
    return entry && entry.until > this.#now() ? entry : undefined;
  }
}

/** The ClusterWriter of one MemoryStore cluster (store.ts), fenced when given FenceOptions. */
export class MemoryClusterWriter implements ClusterWriter {
  readonly cluster: string;
  // Declared, not defined: an unfenced writer has no `fence` key at all.
  declare readonly fence?: WriterFence;
  readonly certificates: CertificateWriter;
  readonly backendTls: BackendTlsWriter;
  readonly #state: MemoryCluster;
  readonly #store: MemoryStoreHooks;
  readonly #fence: MemoryWriterFence | undefined;
  readonly #place: ClusterPlace | undefined;

  constructor(
    cluster: string,
    state: MemoryCluster,
    store: MemoryStoreHooks,
    fence: FenceOptions | undefined,
    place: ClusterPlace | undefined,
  ) {
    this.cluster = cluster;
    this.#state = state;
    this.#store = store;
    this.#place = place;
    this.#fence = fence && new MemoryWriterFence(cluster, state, fence, () => store.now());
    if (this.#fence) this.fence = this.#fence;
    const fenced = () => this.#fence?.check();
    this.certificates = memoryCertificateWriter(state.certificates, state.clientValidations, fenced);
    this.backendTls = memoryBackendTlsWriter(state.backendTls, fenced);
  }

  async put(record: ServiceRecord): Promise<void> {
    assertOwnRecord(this.cluster, record);
    this.#fence?.check();
    this.#state.records.set(record.service, serializeServiceRecord(record));
    this.#notify(record.service, "put");
  }

  async remove(service: string): Promise<void> {
    this.#fence?.check();
    if (this.#state.records.delete(service)) this.#notify(service, "delete");
  }

  async putService(record: ServiceRecordV2): Promise<void> {
    assertOwnRecord(this.cluster, record);
    this.#fence?.check();
    this.#state.records.set(record.service, serializeServiceRecordV2(record));
    this.#state.routes.delete(record.service);
    this.#notify(record.service, "put");
  }

  async removeService(service: string): Promise<void> {
    this.#fence?.check();
    this.#state.routes.delete(service);
    if (this.#state.records.delete(service)) this.#notify(service, "delete");
  }

  async putRoute(route: RouteRecord): Promise<void> {
    const raw = serializeRoute(route);
    this.#fence?.check();
    this.#replaceRoute(route.id, raw);
  }

  async removeRoute(id: string): Promise<void> {
    this.#fence?.check();
    if (this.#state.routes.has(id)) this.#replaceRoute(id, undefined);
  }

  async load(): Promise<Map<string, string>> {
    return new Map(this.#state.records);
  }

  async loadAll(): Promise<StoredRecords> {
    return { services: new Map(this.#state.records), routes: new Map(this.#state.routes) };
  }

  async heartbeat(beat: HeartbeatBeat): Promise<boolean> {
    const { holder, at, leaseMs, ifRegistered, apiserverUnreachableSince, services } = beat;
    const state = this.#state;
    this.#fence?.check();
    // Redis renews its lease key either way, but lists no cluster without its heartbeat record; this
    // store lists every cluster, so an unregistered one stays stale instead.
    if (ifRegistered && !state.registered) return false;
    state.registered = true;
    state.heartbeat = { holder, at, apiserverUnreachableSince, services, ...placeFields(this.#place) };
    state.leaseUntil = this.#store.now() + leaseMs;
    return true;
  }

  #notify(id: string, op: StoreChange["op"], kind: ChangeKind = "service"): void {
    this.#store.changed({ cluster: this.cluster, kind, id, service: id, op });
  }

  /** Replaces a route record and its members of the host index, as the Redis route script does. */
  #replaceRoute(id: string, raw: string | undefined): void {
    const state = this.#state;
    for (const member of indexed(state.routes.get(id))) state.hosts.delete(member);
    for (const member of indexed(raw)) state.hosts.add(member);
    if (raw === undefined) state.routes.delete(id);
    else state.routes.set(id, raw);
    this.#notify(id, raw === undefined ? "delete" : "put", "route");
  }
}

function indexed(raw: string | undefined): string[] {
  const decoded = raw === undefined ? undefined : decodeRoute(raw);
  return decoded?.ok ? hostIndexMembers(decoded.value) : [];
}
