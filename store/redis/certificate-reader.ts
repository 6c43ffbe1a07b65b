import type { Cluster, Redis } from "ioredis";
import type { CertificateReader } from "../certificates.js";
import { clusterKeys, clustersKey } from "../keys.js";

/**
 * The router's CertificateReader over Redis (keys.ts layout): the registry of clusters, then one GET of each
 * cluster's certificate version (sent together: each lives in its cluster's slot), and one HGETALL of a
 * cluster whose version moved. A cluster without the version key has never published a certificate.
 */
export function createRedisCertificateReader(redis: Redis | Cluster, prefix: string): CertificateReader {
  return {
    async versions() {
      const names = (await redis.smembers(clustersKey(prefix))).sort();
      const versions = await Promise.all(
        names.map((name) => redis.get(clusterKeys(prefix, name).certificatesVersion)),
      );
      const out = new Map<string, string>();
      names.forEach((name, index) => {
        const version = versions[index];
        if (typeof version === "string") out.set(name, version);
      });
      return out;
    },
    async records(cluster) {
      return new Map(Object.entries(await redis.hgetall(clusterKeys(prefix, cluster).certificates)));
    },
    async clientValidations(cluster) {
      return new Map(Object.entries(await redis.hgetall(clusterKeys(prefix, cluster).clientValidations)));
    },
  };
}
