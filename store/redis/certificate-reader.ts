import type { Cluster, Redis } from "ioredis";
import * as v from "valibot";
import type { BackendTlsReader } from "../backend-tls.js";
import type { CertificateReader } from "../certificates.js";
import { type ClusterKeys, clusterKeys, clustersKey } from "../keys.js";
import { ClusterNameSchema } from "../names.js";
import { pipelineValues } from "./replies.js";

/** Records of one of a cluster's TLS hashes a router reads at most: far above the listeners of real Gateways. */
export const MAX_CERTIFICATE_RECORDS = 1_000;
/** Bytes one of a cluster's TLS hashes may take in Redis before a router reads it (records ~10 KiB). */
export const MAX_CERTIFICATE_HASH_BYTES = 16 * 1024 * 1024;

/**
 * One of a cluster's TLS hashes (certificates, client validations, backend TLS) holds more than a router reads
 * (MAX_CERTIFICATE_RECORDS, MAX_CERTIFICATE_HASH_BYTES): it is not read, and the last one read keeps serving.
 */
export class CertificatesTooLargeError extends Error {
  constructor(
    readonly cluster: string,
    readonly records: number,
    readonly bytes: number,
  ) {
    super(
      `cluster "${cluster}" has ${records} TLS records taking ${bytes} bytes in Redis, over ${MAX_CERTIFICATE_RECORDS} or ${MAX_CERTIFICATE_HASH_BYTES}: not read`,
    );
    this.name = "CertificatesTooLargeError";
  }
}

/**
 * The router's CertificateReader over Redis (keys.ts layout): the clusters to poll (those the snapshot reader
 * knows, found by their heartbeats, when given; else the registry of clusters, whose names any sync may add),
 * then one GET of each cluster's certificate version (sent together: each lives in its cluster's slot), and,
 * when a version moved, the cluster's hash, once Redis says it is no larger than a router reads
 * (CertificatesTooLargeError otherwise). A cluster without the version key has never published a certificate.
 */
export function createRedisCertificateReader(
  redis: Redis | Cluster,
  prefix: string,
  options: { readonly clusters?: () => readonly string[] } = {},
): CertificateReader {
  return {
    ...versionedHashReader(redis, prefix, (keys) => [keys.certificates, keys.certificatesVersion], options),
    clientValidations: (cluster) =>
      boundedHash(redis, cluster, clusterKeys(prefix, cluster).clientValidations),
  };
}

/**
 * The router's BackendTlsReader over Redis: the `backend-tls` hashes, read as the certificates are (the
 * clusters of `clusters`, when given: those the snapshot reader found by their heartbeats).
 */
export function createRedisBackendTlsReader(
  redis: Redis | Cluster,
  prefix: string,
  options: { readonly clusters?: () => readonly string[] } = {},
): BackendTlsReader {
  return versionedHashReader(redis, prefix, (keys) => [keys.backendTls, keys.backendTlsVersion], options);
}

function versionedHashReader(
  redis: Redis | Cluster,
  prefix: string,
  keysOf: (keys: ClusterKeys) => readonly [hash: string, version: string],
  options: { readonly clusters?: () => readonly string[] } = {},
): BackendTlsReader {
  return {
    async versions() {
      const listed = options.clusters ? [...options.clusters()] : await redis.smembers(clustersKey(prefix));
      const names = listed.filter((name) => v.is(ClusterNameSchema, name)).sort();
      const versions = await Promise.all(
        names.map((name) => redis.get(keysOf(clusterKeys(prefix, name))[1])),
      );
      const out = new Map<string, string>();
      names.forEach((name, index) => {
        const version = versions[index];
        if (typeof version === "string") out.set(name, version);
      });
      return out;
    },
    async records(cluster) {
      return boundedHash(redis, cluster, keysOf(clusterKeys(prefix, cluster))[0]);
    },
  };
}

/** One hash, read once Redis says it is no larger than a router reads (CertificatesTooLargeError otherwise). */
async function boundedHash(
  redis: Redis | Cluster,
  cluster: string,
  key: string,
): Promise<Map<string, string>> {
  const [count, memory] = pipelineValues(
    await redis.pipeline().hlen(key).call("MEMORY", "USAGE", key, "SAMPLES", "0").exec(),
    2,
  );
  const records = Number(count);
  const bytes = typeof memory === "number" ? memory : 0;
  if (records > MAX_CERTIFICATE_RECORDS || bytes > MAX_CERTIFICATE_HASH_BYTES) {
    throw new CertificatesTooLargeError(cluster, records, bytes);
  }
  return new Map(Object.entries(await redis.hgetall(key)));
}
