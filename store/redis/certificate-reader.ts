import type { Cluster, Redis } from "ioredis";
import type { BackendTlsReader } from "../backend-tls.js";
import type { CertificateReader } from "../certificates.js";
import { type ClusterKeys, clusterKeys, clustersKey } from "../keys.js";

/**
 * The router's CertificateReader over Redis (keys.ts layout): the registry of clusters, then one GET of each
 * cluster's certificate version (sent together: each lives in its cluster's slot), and one HGETALL of a
 * cluster whose version moved. A cluster without the version key has never published a certificate.
 */
export function createRedisCertificateReader(redis: Redis | Cluster, prefix: string): CertificateReader {
  return {
    ...versionedHashReader(redis, prefix, (keys) => [keys.certificates, keys.certificatesVersion]),
    async clientValidations(cluster) {
      return new Map(Object.entries(await redis.hgetall(clusterKeys(prefix, cluster).clientValidations)));
    },
  };
}

/** The router's BackendTlsReader over Redis: the `backend-tls` hashes, read as the certificates are. */
export function createRedisBackendTlsReader(redis: Redis | Cluster, prefix: string): BackendTlsReader {
  return versionedHashReader(redis, prefix, (keys) => [keys.backendTls, keys.backendTlsVersion]);
}

function versionedHashReader(
  redis: Redis | Cluster,
  prefix: string,
  keysOf: (keys: ClusterKeys) => readonly [hash: string, version: string],
): BackendTlsReader {
  return {
    async versions() {
      const names = (await redis.smembers(clustersKey(prefix))).sort();
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
      return new Map(Object.entries(await redis.hgetall(keysOf(clusterKeys(prefix, cluster))[0])));
    },
  };
}
