import * as v from "valibot";
import type { BackendTlsWriter } from "./backend-tls.js";
import type { CertificateWriter } from "./certificates.js";
import type { ChangeKind } from "./changes.js";
import type { ClusterPlace } from "./places.js";
import type { BudgetReport } from "./record-budget.js";
import type { ChangeOp, ServiceRecord } from "./records.js";
import { type RouteRecord, RouteRecordSchema } from "./routes.js";
import type { ServiceRecordV2 } from "./services.js";

/**
 * The sync side of the store: one instance per cluster, writing only that cluster's records. Implemented by
 * the Redis writer (redis/writer.ts) and by MemoryStore; test/store/store.case.ts holds both to one contract.
 *
 * A sync writes schema version 2: service records (putService / removeService) and route records (putRoute /
 * removeRoute), each one atomic write with its change entry `{kind, id, op}`. `put` and `remove` write
 * version 1 as a sync not upgraded yet does, for tests and tools that model one.
 */
export interface ClusterWriter {
  readonly cluster: string;
  /**
   * Version 1: atomically replaces the service's record and route and appends a `put` change entry
   * `{service, op}`. Rejects a record of another cluster (assertOwnRecord), storing nothing.
   */
  put(record: ServiceRecord): Promise<void>;
  /** Version 1: atomically removes the service's record and route and appends a `delete` change entry. */
  remove(service: string): Promise<void>;
  /**
   * Atomically replaces the service record (version 2, `services` hash field `ns/name`) and appends the change
   * entry `{kind: service, id, op: put}`; a version 1 route kept under the same field of the `routes` hash
   * goes with it. Rejects a record of another cluster, storing nothing.
   */
  putService(record: ServiceRecordV2): Promise<void>;
  /** Atomically removes the service record (and a version 1 route under its name), with its change entry. */
  removeService(service: string): Promise<void>;
  /**
   * Atomically replaces the route record (`routes` hash field = its id), moves its members of the host index
   * (keys.ts hostIndexMembers) from the stored record's to this one's, and appends `{kind: route, id, op: put}`.
   * Rejects a record that is not a valid RouteRecord, storing nothing. The cluster is then in the registry of
   * clusters (keys.ts clustersKey).
   */
  putRoute(route: RouteRecord): Promise<void>;
  /** Atomically removes the route record and its host index members, with its change entry. */
  removeRoute(id: string): Promise<void>;
  /** Every stored service record of this cluster (any version) as its serialised string, keyed by `ns/name`. */
  load(): Promise<Map<string, string>>;
  /** Both hashes as stored, serialised, in one round trip: what the sync compares its desired state with. */
  loadAll(): Promise<StoredRecords>;
  /**
   * Writes the heartbeat record and the lease that keeps this cluster fresh for `leaseMs`; resolves true.
   * With `ifRegistered`, the record is only replaced, never created, and the result is false when it was
   * missing. It has no TTL, so once written it goes missing only when the store lost it (a restart without
   * persistence, FLUSHALL, a Redis Cluster master restarting empty).
   */
  heartbeat(beat: HeartbeatBeat): Promise<boolean>;
  /**
   * Present on a fenced writer (created with a FenceOptions): then every put, remove and heartbeat first takes
   * the cluster's writer fence when it is free, renews it when it is this writer's, and otherwise stores
   * nothing and rejects with FenceRefusedError, all in one atomic step. Two fenced writers of one cluster can
   * never both write. An unfenced writer (tests, the all-in-one demo) writes without looking at the fence.
   */
  readonly fence?: WriterFence;
  /**
   * The cluster's certificate records (certificates.ts), fenced as every other write; present on the Redis
   * writer and MemoryStore's, absent on writers that model a sync without TLS (tests).
   */
  readonly certificates?: CertificateWriter;
  /** The cluster's backend TLS records (backend-tls.ts), fenced likewise; present where certificates are. */
  readonly backendTls?: BackendTlsWriter;
}

export interface StoredRecords {
  /** `services` hash: `ns/name` → record JSON of any version. */
  readonly services: Map<string, string>;
  /** `routes` hash: route id → record JSON (and `ns/name` → a version 1 sync's route). */
  readonly routes: Map<string, string>;
}

/**
 * The stored form of a route record: its fields in the schema's order, so equal records give equal strings
 * (the sync skips unchanged writes by comparing them). Throws on a record that is not valid.
 */
export function serializeRoute(route: RouteRecord): string {
  const checked = v.safeParse(RouteRecordSchema, route);
  if (!checked.success) {
    const issue = checked.issues[0];
    const path = issue ? v.getDotPath(issue) : null;
    throw new Error(`invalid route record ${route.id}: ${path ?? "(root)"}: ${issue?.message ?? "invalid"}`);
  }
  return JSON.stringify(checked.output);
}

export interface HeartbeatBeat {
  readonly holder: string;
  readonly leaseMs: number;
  readonly at: number;
  readonly ifRegistered?: boolean;
  /** Written into the record while the sync cannot reach its API server (HeartbeatRecord). */
  readonly apiserverUnreachableSince?: number | undefined;
  /** The Service records the sync holds in the store (HeartbeatRecord.services); undefined: not known. */
  readonly services?: number | undefined;
}

export interface FenceOptions {
  /** This writer's identity in the fence (the replica's). */
  readonly holder: string;
  /** How long the fence outlives this writer's last write: no longer than the Kubernetes Lease duration. */
  readonly ttlMs: number;
}

export type FenceStatus = { readonly held: true } | { readonly held: false; readonly holder: string };

/** The writer fence of one cluster, as one fenced writer sees and handles it. */
export interface WriterFence {
  readonly holder: string;
  readonly ttlMs: number;
  /**
   * Another replica's claim on the fence, as the last fenced write or acquire saw it (undefined: none): that
   * replica holds the Kubernetes Lease and waits for this one to let go.
   */
  readonly claimant: string | undefined;
  /**
   * Takes the fence when free (dropping this writer's own claim), renews it when held by this writer; else
   * records this writer's claim on it for `claimMs` (0: no claim) and reports who holds it.
   */
  acquire(claimMs: number): Promise<FenceStatus>;
  /** Who holds the fence now, undefined when free: one read, cheap enough to poll. */
  holderNow(): Promise<string | undefined>;
  /** Frees the fence if this writer holds it; true when it did. */
  release(): Promise<boolean>;
}

/** A fenced write refused: another replica holds the cluster's writer fence. Nothing was stored. */
export class FenceRefusedError extends Error {
  constructor(
    readonly cluster: string,
    readonly holder: string,
  ) {
    super(`the writer fence of cluster "${cluster}" is held by "${holder}"`);
    this.name = "FenceRefusedError";
  }
}

/** Throws unless `record` is one of `cluster`'s: a ClusterWriter stores its own cluster's records only. */
export function assertOwnRecord(cluster: string, record: { readonly cluster: string }): void {
  if (record.cluster !== cluster) {
    throw new Error(`record of cluster "${record.cluster}" given to the writer of "${cluster}"`);
  }
}

/** What routers see of one cluster (decoded by stored-records.ts, whatever version each record was written in). */
export interface ClusterView {
  readonly name: string;
  /** The cluster's lease ran out: its sync went quiet. */
  readonly stale: boolean;
  /**
   * Every valid service record as schema version 2, keyed by `ns/name`: version 1 records of a sync not
   * upgraded yet are converted (services.ts serviceRecordFromV1); invalid ones were logged and skipped.
   */
  readonly servicesV2: ReadonlyMap<string, ServiceRecordV2>;
  /**
   * The valid version 1 records, as stored: what syncs write until they switch to version 2, kept in their own
   * shape for what reads them that way (tests, tools); the router reads servicesV2.
   */
  readonly services: ReadonlyMap<string, ServiceRecord>;
  /**
   * Every route the cluster publishes, by id: its version 2 route records, and the annotation route each
   * version 1 service record stands for.
   */
  readonly routes: ReadonlyMap<string, RouteRecord>;
  /**
   * What a reader that keeps clusters within a budget (the Node router's, store/record-budget.ts) holds and
   * refused of this cluster; absent where nothing is counted.
   */
  readonly budget?: BudgetReport | undefined;
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
  /**
   * Each cluster's last heartbeat record as the source last read it, for the dashboard; omitted by sources that
   * do not read them (the Workers source reads only what routing needs). Kept out of the snapshot: it changes
   * every heartbeat, and a new snapshot would rebuild every route index.
   */
  heartbeats?(): ReadonlyMap<string, ClusterHeartbeat>;
}

/** What a cluster's heartbeat record says about its sync (writer's clock, ms since epoch) and where it runs. */
export interface ClusterHeartbeat extends ClusterPlace {
  readonly holder: string;
  readonly at: number;
  /** Set while the sync cannot reach its Kubernetes API server. */
  readonly apiserverUnreachableSince?: number | undefined;
  /** The Service records the sync said it holds in the store at that beat; undefined from older syncs. */
  readonly services?: number | undefined;
}

/** One write MemoryStore tells its subscribers of. */
export interface StoreChange {
  readonly cluster: string;
  /** A service record (version 1 or 2) or a route record changed. */
  readonly kind: ChangeKind;
  /** `ns/name` of the service, or the route's id. */
  readonly id: string;
  /** The same as `id` (named for the version 1 writes, which change services only). */
  readonly service: string;
  readonly op: ChangeOp;
}
