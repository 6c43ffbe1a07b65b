import type { Hono } from "hono";
import { createJsonLogger } from "../../lib/logger.js";
import { createWarnOnce } from "../../lib/warn-once.js";
import { createApp } from "../app/app.js";
import { createAccessLog } from "../core/observability/access-log.js";
import type { RouterConfig } from "../core/settings/config.js";
import { createFetchUpstream } from "../transports/fetch.js";
import { clientLocationOf } from "./client-location.js";
import { PipelinedDeltaReader } from "./delta-reader.js";
import { DeltaSnapshotSource } from "./delta-source.js";
import { openPipelineConnection } from "./read-connection.js";

/**
 * What one isolate builds once and keeps in module scope (main.ts): the snapshot cache and the app. Only
 * the Redis connection is per read (read-connection.ts, delta-reader.ts).
 */
export interface IsolateRuntime {
  readonly source: DeltaSnapshotSource;
  readonly app: Hono;
}

/** `fetchFn` reaches the pods: a Workers VPC network binding, or the global fetch. */
export function createIsolateRuntime(config: RouterConfig, fetchFn: typeof fetch): IsolateRuntime {
  const logger = createJsonLogger({
    level: config.logLevel,
    base: { component: "router", runtime: "workers" },
  });
  const warnings = createWarnOnce(logger);
  const reader = new PipelinedDeltaReader({
    prefix: config.prefix,
    connect: () => openPipelineConnection(config, logger),
    warnings,
    logger,
  });
  const source = new DeltaSnapshotSource({
    reader,
    ttlMs: config.cacheTtlMs,
    hostBudgetBytes: config.workerHostBudgetBytes,
    now: Date.now,
    logger,
  });
  const app = createApp({
    source,
    // Workers' fetch re-encodes a body it decoded when the response is returned as is (transports/fetch.ts),
    // and answers a WebSocket handshake with a 101 Response whose webSocket the Worker may return as is.
    upstream: createFetchUpstream(fetchFn, { decodesContentEncoding: false, webSockets: true }),
    config,
    now: Date.now,
    random: Math.random,
    // Isolates share no memory, so in-flight counts for power-of-two-choices would be per isolate and misleading.
    balancing: "random",
    logger,
    // Set by Cloudflare's edge on every request; a client cannot forge it there.
    clientAddress: (c) => c.req.header("cf-connecting-ip"),
    // Cloudflare's estimate of where the client is: proximity steering measures from it, per request.
    clientLocation: (c) => clientLocationOf((c.req.raw as { cf?: unknown }).cf),
    // Workers Logs and `wrangler tail` take console lines; there is no stdout to batch.
    accessLog: createAccessLog(config.accessLog, Math.random, (line) => console.log(line)),
  });
  return { source, app };
}
