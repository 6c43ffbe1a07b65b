import { silentLogger } from "../../../lib/logger.js";
import { clusterKeys, clustersKey } from "../../../store/keys.js";
import {
  createRedisBackendTlsReader,
  createRedisCertificateReader,
} from "../../../store/redis/certificate-reader.js";
import { createRedisClient } from "../../../store/redis/client.js";
import { createRedisSnapshotSource } from "../../../store/redis/source.js";
import type { RedisTarget } from "../../../store/redis/target.js";
import { createRedisWriter } from "../../../store/redis/writer.js";
import { deleteKeysWithPrefix, uniquePrefix } from "../../support/redis.js";
import type { StoreDriver } from "../store.case.js";

/**
 * The Redis store at `target` as the contract suite drives it, under a key prefix of its own: writers on a
 * client like the sync's, and the router's reader (createRedisSnapshotSource) on a client set up as the Node
 * router sets up its own, refreshing every 100 ms.
 */
export async function redisStoreDriver(target: RedisTarget): Promise<StoreDriver> {
  const prefix = uniquePrefix("contract");
  const writing = createRedisClient(target, {
    enableOfflineQueue: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => 100,
  });
  writing.on("error", () => {});
  const reading = createRedisClient(target, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: () => 100,
    connectionName: "edgeslice-contract-router",
    lazyConnect: true,
  });
  reading.on("error", () => {});
  await reading.connect();
  const source = createRedisSnapshotSource({
    redis: reading,
    prefix,
    logger: silentLogger,
    now: Date.now,
    refreshIntervalMs: 100,
    blockMs: 200,
  });
  await source.start();
  return {
    writer: (cluster, fence) => createRedisWriter(writing, { prefix, cluster, ...(fence ? { fence } : {}) }),
    source,
    certificates: createRedisCertificateReader(reading, prefix),
    backendTls: createRedisBackendTlsReader(reading, prefix),
    hostIndex: async (cluster) => writing.zrange(clusterKeys(prefix, cluster).hosts, "0", "-1"),
    clusterRegistry: async () => (await writing.smembers(clustersKey(prefix))).sort(),
    async writeRawRecord(cluster, service, raw) {
      const keys = clusterKeys(prefix, cluster);
      await writing
        .multi()
        .hset(keys.services, service, raw)
        .xadd(keys.changes, "*", "service", service, "op", "put")
        .exec();
    },
    async close() {
      await source.close();
      reading.disconnect();
      await deleteKeysWithPrefix(writing, prefix);
      writing.disconnect();
    },
  };
}
