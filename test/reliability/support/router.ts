import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { type NodeRouter, startNodeRouter } from "../../../functions/node/server.js";
import { createJsonLogger, type Logger } from "../../../lib/logger.js";
import type { SnapshotSource } from "../../../store/store.js";

/**
 * The Node router exactly as `npm run router` builds it (undici pools, Hono on @hono/node-server), on
 * 127.0.0.1 port 0. `env` takes the router's own variable names; `source` replaces Redis with a given store.
 */
export async function startTestRouter(options: {
  env?: Record<string, string>;
  source?: SnapshotSource;
  refreshIntervalMs?: number;
  logger?: Logger;
}): Promise<NodeRouter> {
  const config = parseRouterConfig({ PORT: "0", LOG_LEVEL: "error", ...options.env });
  return startNodeRouter(config, {
    host: "127.0.0.1",
    logger: options.logger ?? createJsonLogger({ level: "error", write: () => {} }),
    drainMs: 1_000,
    ...(options.source ? { source: options.source } : {}),
    ...(options.refreshIntervalMs !== undefined ? { refreshIntervalMs: options.refreshIntervalMs } : {}),
  });
}
