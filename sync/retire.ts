import { EXIT_CODES } from "../lib/exit-codes.js";
import type { Logger } from "../lib/logger.js";
import { retireCluster } from "../store/redis/retire.js";
import type { SyncConfig } from "./config.js";
import { createSyncMetrics } from "./metrics.js";
import { closeRedis, connectRedis, untilRedisReady } from "./redis-connection.js";

/**
 * `npm run sync -- --retire`: removes CLUSTER_NAME from the store for good (store/redis/retire.ts), once its
 * syncs are gone. Routers stop serving it at their next read. Exit 0 when retired, 1 when a sync still holds
 * the cluster's writer fence (nothing removed) or Redis failed, 78 for a bad setting.
 */
export async function retireFromStore(config: SyncConfig, logger: Logger): Promise<number> {
  const redis = connectRedis(config.redis, logger, createSyncMetrics({ cluster: config.cluster }));
  try {
    const problem = await untilRedisReady(redis, config.redis, 10_000, logger);
    if (problem) return problem.configuration ? EXIT_CODES.configuration : EXIT_CODES.failure;
    const result = await retireCluster(redis, config.prefix, config.cluster, `retire:${config.identity}`);
    if (!result.retired) {
      logger.error(
        `a sync still writes cluster ${config.cluster} (writer fence held by ${result.holder}): nothing removed; ` +
          "stop it first (delete or scale its Deployment to 0), then retire again",
        { cluster: config.cluster, holder: result.holder },
      );
      return EXIT_CODES.failure;
    }
    logger.info("retired the cluster: its records and registry entry are removed", {
      cluster: config.cluster,
      removedKeys: result.removedKeys,
    });
    return EXIT_CODES.ok;
  } catch (error) {
    logger.error("retiring the cluster failed", { cluster: config.cluster, error });
    return EXIT_CODES.failure;
  } finally {
    await closeRedis(redis);
  }
}
