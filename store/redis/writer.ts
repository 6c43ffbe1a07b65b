import type { Cluster, Redis } from "ioredis";
import { type BackendTlsRecord, backendTlsField, serializeBackendTlsRecord } from "../backend-tls.js";
import { type CertificateRecord, serializeCertificateRecord } from "../certificates.js";
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
import { type ServiceRecordV2, serializeServiceRecordV2 } from "../services.js";
import {
  assertOwnRecord,
  type ClusterWriter,
  type FenceOptions,
  FenceRefusedError,
  serializeRoute,
  type WriterFence,
} from "../store.js";
import { SCRIPTS, type Script } from "./writer-scripts.js";

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
  const { cluster } = options;
  const keys = clusterKeys(options.prefix, cluster);
  const maxLen = options.streamMaxLen ?? CHANGE_STREAM_MAXLEN;
  if (options.fence && !(options.fence.ttlMs >= 1 && options.fence.holder !== "")) {
    throw new Error("a writer fence needs a holder and a TTL of at least 1 ms");
  }
  const holder = options.fence?.holder ?? "";
  const ttlMs = options.fence?.ttlMs ?? 0;
  let claimant: string | undefined;
  const registry = clustersKey(options.prefix);
  const register = async () => {
    try {
      await redis.sadd(registry, cluster);
    } catch (error) {
      options.onRegistryError?.(error);
    }
  };

  /** Runs a fenced script; resolves its status (1, or 2 from a heartbeat) or rejects a refused write. */
  const fenced = async (which: Script, moreKeys: string[], args: (string | number)[]) => {
    const reply = await run(redis, which, [keys.writer, keys.claim, ...moreKeys], [holder, ttlMs, ...args]);
    const [status, who] = reply as [number, string];
    if (status === 0) throw new FenceRefusedError(cluster, who);
    claimant = who === "" ? undefined : who;
    return status;
  };

  const fence: WriterFence | undefined = options.fence && {
    holder,
    ttlMs,
    get claimant() {
      return claimant;
    },
    async acquire(claimMs) {
      const reply = await run(redis, SCRIPTS.acquire, [keys.writer, keys.claim], [holder, ttlMs, claimMs]);
      const [status, who] = reply as [number, string];
      if (status === 0) return { held: false, holder: who };
      claimant = who === "" ? undefined : who;
      return { held: true };
    },
    async holderNow() {
      return (await redis.get(keys.writer)) ?? undefined;
    },
    async release() {
      return (await run(redis, SCRIPTS.release, [keys.writer], [holder])) === 1;
    },
  };

  const certificateKeys = [keys.certificates, keys.certificatesVersion];
  // The same script over the validations' hash: one version counter for both, polled by routers.
  const validationKeys = [keys.clientValidations, keys.certificatesVersion];
  const certificates = {
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

  const backendTlsKeys = [keys.backendTls, keys.backendTlsVersion];
  const backendTls = {
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

  return {
    cluster,
    ...(fence ? { fence } : {}),
    certificates,
    backendTls,
    async put(record: ServiceRecord) {
      assertOwnRecord(cluster, record);
      await fenced(
        SCRIPTS.put,
        [keys.services, keys.routes, keys.changes],
        [record.service, serializeServiceRecord(record), serializeRouteRecord(routeOf(record)), maxLen],
      );
    },
    async remove(service: string) {
      await fenced(SCRIPTS.remove, [keys.services, keys.routes, keys.changes], [service, maxLen]);
    },
    async putService(record: ServiceRecordV2) {
      assertOwnRecord(cluster, record);
      await fenced(
        SCRIPTS.service,
        [keys.services, keys.routes, keys.changes],
        [record.service, serializeServiceRecordV2(record), maxLen],
      );
    },
    async removeService(service: string) {
      await fenced(SCRIPTS.service, [keys.services, keys.routes, keys.changes], [service, "", maxLen]);
    },
    async putRoute(route) {
      const raw = serializeRoute(route);
      // Sent together: the registry costs no round trip of its own.
      await Promise.all([
        fenced(SCRIPTS.route, [keys.routes, keys.hosts, keys.changes], [route.id, raw, maxLen]),
        register(),
      ]);
    },
    async removeRoute(id: string) {
      await Promise.all([
        fenced(SCRIPTS.route, [keys.routes, keys.hosts, keys.changes], [id, "", maxLen]),
        register(),
      ]);
    },
    async load() {
      return new Map(Object.entries(await redis.hgetall(keys.services)));
    },
    async loadAll() {
      // One slot, so one pipeline (one round trip) on Redis Cluster too.
      const results = await redis.pipeline().hgetall(keys.services).hgetall(keys.routes).exec();
      const [services, routes] = (results ?? []).map(([error, value]) => {
        if (error) throw error;
        return new Map(Object.entries((value ?? {}) as Record<string, string>));
      });
      return { services: services ?? new Map(), routes: routes ?? new Map() };
    },
    async heartbeat(beat) {
      const record: HeartbeatRecord = {
        v: SCHEMA_VERSION,
        cluster,
        holder: beat.holder,
        at: beat.at,
        leaseMs: beat.leaseMs,
        ...(beat.apiserverUnreachableSince === undefined
          ? {}
          : { apiserverUnreachableSince: beat.apiserverUnreachableSince }),
        ...(beat.services === undefined ? {} : { services: beat.services }),
        ...placeFields(options.place),
      };
      const status = await fenced(
        SCRIPTS.heartbeat,
        [keys.heartbeat, keys.lease],
        [JSON.stringify(record), beat.holder, beat.leaseMs, beat.ifRegistered ? "1" : "0"],
      );
      // A beat that found the store empty (status 2) registers nothing: the re-push comes first.
      if (status === 1) await register();
      return status === 1;
    },
  };
}

/**
 * EVALSHA, and EVAL when the server answers NOSCRIPT (it restarted, or never saw the script): the script
 * cache is per node and empties on restart, so the fallback is the normal path once per node and restart.
 */
async function run(
  redis: Redis | Cluster,
  which: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(which.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
    return redis.eval(which.text, keys.length, ...keys, ...args);
  }
}
