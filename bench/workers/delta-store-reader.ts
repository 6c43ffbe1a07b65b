import { normaliseHost } from "../../functions/core/http/hosts.js";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { PipelinedDeltaReader } from "../../functions/workers/delta-reader.js";
import { DeltaSnapshotSource } from "../../functions/workers/delta-source.js";
import { openPipelineConnection } from "../../functions/workers/read-connection.js";
import { silentLogger } from "../../lib/logger.js";
import { createWarnOnce } from "../../lib/warn-once.js";
import { addressesServing, type WorkersStoreReader, type WorkersStoreTarget } from "./reader.js";

/**
 * The Workers source as it ships (functions/workers/delta-source.ts over delta-reader.ts): a cold request
 * reads its host's records (the whole store follows after the response), a refresh reads the change streams
 * and only what they name. The isolate's clock is the reader's own, so a refresh is due exactly when the
 * bench asks for one.
 */
export function createDeltaStoreReader(target: WorkersStoreTarget): WorkersStoreReader {
  const config = parseRouterConfig({ REDIS_URL: target.url, EDGESLICE_PREFIX: target.prefix });
  const warnings = createWarnOnce(silentLogger);
  let clock = 0;
  const reader = new PipelinedDeltaReader({
    prefix: config.prefix,
    connect: () => openPipelineConnection(config, silentLogger),
    warnings,
    logger: silentLogger,
  });
  const source = new DeltaSnapshotSource({
    reader,
    ttlMs: config.cacheTtlMs,
    now: () => clock,
    logger: silentLogger,
  });
  const deferred: Promise<unknown>[] = [];

  const addressesOf = (host: string) => addressesServing(source.current(), host);

  return {
    async refresh() {
      await this.settle?.();
      clock += config.cacheTtlMs;
      const before = source.status().lastLoadAt;
      const started: Promise<unknown>[] = [];
      await source.prepare(undefined, (promise) => started.push(promise));
      if (started.length !== 1) throw new Error("a refresh past the TTL did not start a read");
      await Promise.all(started);
      if (source.status().lastLoadAt === before) throw new Error("the refresh failed");
    },
    async coldRequest(host) {
      await source.prepare(normaliseHost(host), (promise) => deferred.push(promise));
      if (addressesOf(host) === undefined) throw new Error(`a cold request cannot route ${host}`);
    },
    async settle() {
      await Promise.all(deferred.splice(0));
      if (source.status().lastLoadAt === undefined)
        throw new Error("the whole store was not read after the cold request");
    },
    addressesOf,
  };
}
