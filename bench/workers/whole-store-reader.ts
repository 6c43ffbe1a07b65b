import type { RouterConfig } from "../../functions/core/settings/config.js";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { oneReadClient } from "../../functions/workers/read-connection.js";
import { type Logger, silentLogger } from "../../lib/logger.js";
import { createWarnOnce, type WarnOnce } from "../../lib/warn-once.js";
import { loadSnapshot } from "../../store/redis/snapshot.js";
import type { Snapshot } from "../../store/store.js";
import { addressesServing, type WorkersStoreReader, type WorkersStoreTarget } from "./reader.js";
import { createWorkerSnapshotSource } from "./whole-store-source.js";

/**
 * The whole-store Workers source (whole-store-source.ts over loadWithOwnClient): every load opens a client,
 * reads the whole store (SCAN for heartbeats, then per cluster one pipeline with HGETALL of its services),
 * decodes every record and closes the client. The isolate's clock is the reader's own, so a refresh is due
 * exactly when the bench asks for one.
 */
export function createWholeStoreReader(target: WorkersStoreTarget): WorkersStoreReader {
  const config = parseRouterConfig({ REDIS_URL: target.url, EDGESLICE_PREFIX: target.prefix });
  const warnings = createWarnOnce(silentLogger);
  let clock = 0;
  const source = createWorkerSnapshotSource({
    load: (version) => loadWithOwnClient(config, silentLogger, warnings, version),
    ttlMs: config.cacheTtlMs,
    now: () => clock,
    logger: silentLogger,
  });

  const addressesOf = (host: string) => addressesServing(source.current(), host);

  return {
    async refresh() {
      clock += config.cacheTtlMs;
      const before = source.status().lastLoadAt;
      const started: Promise<unknown>[] = [];
      await source.prepare((promise) => started.push(promise));
      if (started.length !== 1) throw new Error("a refresh past the TTL did not start a reload");
      await Promise.all(started);
      if (source.status().lastLoadAt === before) throw new Error("the reload failed");
    },
    async coldRequest(host) {
      await source.prepare(() => {
        throw new Error("a cold isolate waits for its load; it never defers it");
      });
      if (addressesOf(host) === undefined) throw new Error(`a cold request cannot route ${host}`);
    },
    addressesOf,
  };
}

/**
 * One whole-store load: opens a client, reads the whole store, closes it. Nothing survives the call but
 * `warnings`, the isolate's memory of what it already reported (a bad record is logged once, not per TTL).
 */
async function loadWithOwnClient(
  config: RouterConfig,
  logger: Logger,
  warnings: WarnOnce,
  version: number,
): Promise<Snapshot> {
  const redis = oneReadClient(config, logger, {});
  try {
    await redis.connect();
    return await loadSnapshot(redis, { prefix: config.prefix, logger, version, warnings });
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}
