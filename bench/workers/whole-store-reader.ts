import { parseRouterConfig } from "../../functions/core/config.js";
import { loadWithOwnClient } from "../../functions/workers/redis-load.js";
import { createWorkerSnapshotSource } from "../../functions/workers/source.js";
import { silentLogger } from "../../lib/logger.js";
import { createWarnOnce } from "../../lib/warn-once.js";
import { addressesServing, type WorkersStoreReader, type WorkersStoreTarget } from "./reader.js";

/**
 * The Workers source as it ships (functions/workers/source.ts over redis-load.ts): every load opens a client,
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
