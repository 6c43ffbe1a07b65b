import type { Cluster, Redis } from "ioredis";
import {
  type BackendTlsRecord,
  type BackendTlsWriter,
  backendTlsField,
  serializeBackendTlsRecord,
} from "../backend-tls.js";
import {
  type CertificateRecord,
  type CertificateWriter,
  serializeCertificateRecord,
} from "../certificates.js";
import { type ClientValidationRecord, serializeClientValidationRecord } from "../client-validations.js";
import { CHANGE_STREAM_MAXLEN, clusterKeys, clustersKey } from "../keys.js";
import { type ClusterPlace, placeFields } from "../places.js";
import {
  type HeartbeatRecord,
  routeOf,
  SCHEMA_VERSION,
  type ServiceRecord,
  serializeRouteRecord,
  serializeServiceRecord,
} from "../records.js";
import type { RouteRecord } from "../routes.js";
import { type ServiceRecordV2, serializeServiceRecordV2 } from "../services.js";
import {
  assertOwnRecord,
  type ClusterWriter,
  type FenceOptions,
  type HeartbeatBeat,
  type StoredRecords,
  serializeRoute,
  type WriterFence,
} from "../store.js";
import { RedisWriterFence } from "./writer-fence.js";
import { SCRIPTS } from "./writer-scripts.js";

export interface RedisWriterOptions {
  readonly prefix: string;
  readonly cluster: string;
  /** Entries kept in the change stream (approximate trim); the contract's value unless a test shrinks it. */
  readonly streamMaxLen?: number;
  /** Makes every write fenced (store.ts ClusterWriter.fence); left out, writes ignore the fence. */
  readonly fence?: FenceOptions;
  /**
   * Adding the cluster to the registry of clusters failed (a Redis ACL from before the registry refuses the
   * SADD): the write itself is done, so it is reported here rather than failing the write.
   */
  readonly onRegistryError?: (error: unknown) => void;
  /** Where the cluster runs (CLUSTER_REGION, CLUSTER_LOCATION): written into every heartbeat record. */
  readonly place?: ClusterPlace;
}

/**
 * The sync side of the Redis store (keys.ts layout): the ClusterWriter of one cluster, a `Cluster` client
 * working as well as a standalone one.
 *
 * @example
 * const writer = createRedisWriter(redis, { prefix: "edgeslice", cluster: "east",
 *   fence: { holder: "sync-east-0", ttlMs: 15_000 } });
 * await writer.fence?.acquire(15_000);     // { held: true }, or who holds it
 * await writer.heartbeat({ holder: "sync-east-0", leaseMs: 30_000, at: Date.now() });
 * await writer.putService(record);        // record.cluster === "east"
 * await writer.putRoute(route);           // route.rules[].backends name east's services
 *
 * Each heartbeat and route write also adds the cluster's name to the registry of clusters (keys.ts
 * clustersKey). That key lies in another slot than the cluster's, so it is a command of its own after the
 * script; SADD is idempotent, so doing it every time keeps the registry whole after the store lost it.
 */
export function createRedisWriter(redis: Redis | Cluster, options: RedisWriterOptions): ClusterWriter {
  return new RedisClusterWriter(redis, options);
}

class RedisClusterWriter implements ClusterWriter {
  readonly cluster: string;
  // Declared, not defined: an unfenced writer has no `fence` key at all.
  declare readonly fence?: WriterFence;
  readonly certificates: CertificateWriter;
  readonly backendTls: BackendTlsWriter;
  readonly #redis: Redis | Cluster;
  readonly #options: RedisWriterOptions;
  readonly #keys: ReturnType<typeof clusterKeys>;
  readonly #maxLen: number;
  /** Every write's script runs through the fence (with no holder when the writer is unfenced). */
  readonly #scripts: RedisWriterFence;

  constructor(redis: Redis | Cluster, options: RedisWriterOptions) {
    if (options.fence && !(options.fence.ttlMs >= 1 && options.fence.holder !== "")) {
      throw new Error("a writer fence needs a holder and a TTL of at least 1 ms");
    }
    this.#redis = redis;
    this.#options = options;
    this.cluster = options.cluster;
    this.#keys = clusterKeys(options.prefix, options.cluster);
    this.#maxLen = options.streamMaxLen ?? CHANGE_STREAM_MAXLEN;
    this.#scripts = new RedisWriterFence(redis, this.#keys, options.cluster, {
      holder: options.fence?.holder ?? "",
      ttlMs: options.fence?.ttlMs ?? 0,
    });
    if (options.fence) this.fence = this.#scripts;
    const fenced = this.#scripts.run.bind(this.#scripts);
    this.certificates = certificateWrites(redis, this.#keys, fenced);
    this.backendTls = backendTlsWrites(redis, this.#keys, fenced);
  }

  async put(record: ServiceRecord): Promise<void> {
    assertOwnRecord(this.cluster, record);
    const keys = this.#keys;
    await this.#scripts.run(
      SCRIPTS.put,
      [keys.services, keys.routes, keys.changes],
      [record.service, serializeServiceRecord(record), serializeRouteRecord(routeOf(record)), this.#maxLen],
    );
  }

  async remove(service: string): Promise<void> {
    const keys = this.#keys;
    await this.#scripts.run(
      SCRIPTS.remove,
      [keys.services, keys.routes, keys.changes],
      [service, this.#maxLen],
    );
  }

  async putService(record: ServiceRecordV2): Promise<void> {
    assertOwnRecord(this.cluster, record);
    const keys = this.#keys;
    await this.#scripts.run(
      SCRIPTS.service,
      [keys.services, keys.routes, keys.changes],
      [record.service, serializeServiceRecordV2(record), this.#maxLen],
    );
  }

  async removeService(service: string): Promise<void> {
    const keys = this.#keys;
    await this.#scripts.run(
      SCRIPTS.service,
      [keys.services, keys.routes, keys.changes],
      [service, "", this.#maxLen],
    );
  }

  async putRoute(route: RouteRecord): Promise<void> {
    const raw = serializeRoute(route);
    const keys = this.#keys;
    // Sent together: the registry costs no round trip of its own.
    await Promise.all([
      this.#scripts.run(
        SCRIPTS.route,
        [keys.routes, keys.hosts, keys.changes],
        [route.id, raw, this.#maxLen],
      ),
      this.#register(),
    ]);
  }

  async removeRoute(id: string): Promise<void> {
    const keys = this.#keys;
    await Promise.all([
      this.#scripts.run(SCRIPTS.route, [keys.routes, keys.hosts, keys.changes], [id, "", this.#maxLen]),
      this.#register(),
    ]);
  }

  async load(): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.#redis.hgetall(this.#keys.services)));
  }

  async loadAll(): Promise<StoredRecords> {
    // One slot, so one pipeline (one round trip) on Redis Cluster too.
    const keys = this.#keys;
    const results = await this.#redis.pipeline().hgetall(keys.services).hgetall(keys.routes).exec();
    const [services, routes] = (results ?? []).map(([error, value]) => {
      if (error) throw error;
      return new Map(Object.entries((value ?? {}) as Record<string, string>));
    });
    return { services: services ?? new Map(), routes: routes ?? new Map() };
  }

  async heartbeat(beat: HeartbeatBeat): Promise<boolean> {
    const record: HeartbeatRecord = {
      v: SCHEMA_VERSION,
      cluster: this.cluster,
      holder: beat.holder,
      at: beat.at,
      leaseMs: beat.leaseMs,
      ...(beat.apiserverUnreachableSince === undefined
        ? {}
        : { apiserverUnreachableSince: beat.apiserverUnreachableSince }),
      ...(beat.services === undefined ? {} : { services: beat.services }),
      ...placeFields(this.#options.place),
    };
    const status = await this.#scripts.run(
      SCRIPTS.heartbeat,
      [this.#keys.heartbeat, this.#keys.lease],
      [JSON.stringify(record), beat.holder, beat.leaseMs, beat.ifRegistered ? "1" : "0"],
    );
    // A beat that found the store empty (status 2) registers nothing: the re-push comes first.
    if (status === 1) await this.#register();
    return status === 1;
  }

  async #register(): Promise<void> {
    try {
      await this.#redis.sadd(clustersKey(this.#options.prefix), this.cluster);
    } catch (error) {
      this.#options.onRegistryError?.(error);
    }
  }
}

type Fenced = RedisWriterFence["run"];

function certificateWrites(redis: Redis | Cluster, keys: ReturnType<typeof clusterKeys>, fenced: Fenced) {
  const certificateKeys = [keys.certificates, keys.certificatesVersion];
  // The same script over the validations' hash: one version counter for both, polled by routers.
  const validationKeys = [keys.clientValidations, keys.certificatesVersion];
  return {
    async putCertificate(record: CertificateRecord) {
      const raw = serializeCertificateRecord(record);
      await fenced(SCRIPTS.certificate, certificateKeys, [record.id, raw]);
    },
    async removeCertificate(id: string) {
      await fenced(SCRIPTS.certificate, certificateKeys, [id, ""]);
    },
    async loadCertificates() {
      return new Map(Object.entries(await redis.hgetall(keys.certificates)));
    },
    async putClientValidation(record: ClientValidationRecord) {
      const raw = serializeClientValidationRecord(record);
      await fenced(SCRIPTS.certificate, validationKeys, [record.id, raw]);
    },
    async removeClientValidation(id: string) {
      await fenced(SCRIPTS.certificate, validationKeys, [id, ""]);
    },
    async loadClientValidations() {
      return new Map(Object.entries(await redis.hgetall(keys.clientValidations)));
    },
  };
}

function backendTlsWrites(redis: Redis | Cluster, keys: ReturnType<typeof clusterKeys>, fenced: Fenced) {
  const backendTlsKeys = [keys.backendTls, keys.backendTlsVersion];
  return {
    async putBackendTls(record: BackendTlsRecord) {
      const raw = serializeBackendTlsRecord(record);
      await fenced(SCRIPTS.certificate, backendTlsKeys, [backendTlsField(record), raw]);
    },
    async removeBackendTls(field: string) {
      await fenced(SCRIPTS.certificate, backendTlsKeys, [field, ""]);
    },
    async loadBackendTls() {
      return new Map(Object.entries(await redis.hgetall(keys.backendTls)));
    },
  };
}
