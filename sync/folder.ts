import { EXIT_CODES } from "../lib/exit-codes.js";
import type { Logger } from "../lib/logger.js";
import { shutdownSignal } from "../lib/signals.js";
import { createRedisWriter } from "../store/redis/writer.js";
import type { SyncConfig } from "./config.js";
import { cacheFromObjects, readManifestFolder } from "./kube/manifests.js";
import { createSyncMetrics } from "./metrics.js";
import { printCertificates, printLines, printRoutes } from "./print.js";
import { createPublishPipeline, type PublishPipeline } from "./publish/pipeline.js";
import { repushOnReconnect } from "./publish/repush-on-reconnect.js";
import { closeRedis, connectRedis, untilRedisReady } from "./redis-connection.js";
import type { RouteSettings } from "./translate/desired-routes.js";

/**
 * `npm run sync -- --from DIR`: the manifests of a folder instead of a cluster, printed (`--print`) or
 * published. Each resolves the process exit code.
 */

/**
 * `--from DIR --print`: translate the folder's manifests and print them; what was skipped or trimmed is named
 * on stderr. Exit 1 only if DIR is unreadable.
 */
export async function printFromFolder(
  dir: string,
  cluster: string,
  settings: RouteSettings,
  logger: Logger,
  options: { readonly tlsStoreKeySet: boolean } = { tlsStoreKeySet: false },
): Promise<number> {
  const loaded = await readManifestFolder(dir, logger);
  if (!loaded) return 1;
  const routes = printRoutes(cluster, loaded.services, loaded.routeObjects, settings);
  for (const warning of routes.warnings) logger.warn(warning.message, { cluster, ...warning.fields });
  const certificates = printCertificates(cluster, routes.certificates);
  if (certificates.length > 0 && !options.tlsStoreKeySet) {
    logger.warn("TLS_STORE_KEY is not set: the sync would publish none of these certificates", {
      cluster,
      certificates: certificates.length,
    });
  }
  const lines = [...printLines(cluster, loaded.services, loaded.slices), ...routes.lines, ...certificates];
  process.stdout.write(lines.map((line) => `${line}\n`).join(""));
  return 0;
}

/**
 * `--from DIR` without `--print`: publishes the folder's manifests to the store (only what differs,
 * leftovers of earlier runs removed) and writes one heartbeat so routers discover the cluster.
 * With `once` false it keeps publishing until SIGTERM/SIGINT through the same loop as live mode: heartbeats,
 * and the whole folder again whenever the store lost it (repush-on-reconnect.ts).
 */
export async function publishFromFolder(
  dir: string,
  config: SyncConfig,
  options: { logger: Logger; once: boolean },
): Promise<number> {
  const { logger } = options;
  const loaded = await readManifestFolder(dir, logger);
  if (!loaded) return 1;
  const metrics = createSyncMetrics({ cluster: config.cluster });
  const redis = connectRedis(config.redis, logger, metrics);
  try {
    const problem = await untilRedisReady(redis, config.redis, 10_000, logger);
    if (problem) return problem.configuration ? EXIT_CODES.configuration : EXIT_CODES.failure;
    const writer = createRedisWriter(redis, {
      prefix: config.prefix,
      cluster: config.cluster,
      fence: { holder: config.identity, ttlMs: config.fenceMs },
      place: config.place,
    });
    // The same writer fence as a live sync's: never publish over a replica that writes this cluster.
    const fence = await writer.fence?.acquire(0);
    if (fence && !fence.held) {
      logger.error("another sync writes this cluster; stop it first", {
        cluster: config.cluster,
        holder: fence.holder,
      });
      return 1;
    }
    const pipeline = createPublishPipeline({
      cache: cacheFromObjects(loaded.services, loaded.slices, loaded.routeObjects),
      routeSettings: config.routes,
      tlsStoreKey: config.tlsStoreKey,
      writer,
      // The folder is the operator's explicit desired state: nothing to wait for, so no hold.
      valve: { ...config.valve, holdMs: 0 },
      holder: config.identity,
      leaseMs: config.leaseMs,
      heartbeatMs: config.heartbeatMs,
      // Kept running, it publishes as live mode does: a store that lost the folder gets it back.
      repushWhenStoreLost: !options.once,
      logger,
      metrics,
    });
    const pending = options.once ? await pipeline.publishOnce() : await publishAndKeep(pipeline);
    if (pending > 0) {
      logger.error("could not write every Service to the store", { ...pipeline.reconciler.unpublished });
      await pipeline.stop();
      return 1;
    }
    pipeline.heartbeat.start();
    if (!options.once) repushOnReconnect(redis, pipeline);
    logger.info("published manifests", {
      dir,
      cluster: config.cluster,
      written: metrics.get("writes"),
      removed: metrics.get("deletes"),
      routesWritten: metrics.get("routeWrites"),
      routesRemoved: metrics.get("routeDeletes"),
      unchanged: metrics.get("skippedUnchanged"),
    });
    if (!options.once) await shutdownSignal(logger);
    await pipeline.stop();
    await writer.fence?.release();
    return 0;
  } catch (error) {
    logger.error("publishing manifests failed", { error });
    return 1;
  } finally {
    await closeRedis(redis);
  }
}

/** Publishes the whole folder and keeps the reconciler running; resolves how many Services it could not write. */
async function publishAndKeep(pipeline: PublishPipeline): Promise<number> {
  await pipeline.reconciler.enable();
  return pipeline.reconciler.pending;
}
