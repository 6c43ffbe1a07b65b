import { createJsonLogger } from "../../lib/logger.js";
import { shutdownSignal } from "../../lib/signals.js";
import { NO_GRANTS_WARNING } from "../core/cluster-grants.js";
import { parseRouterConfig, type RouterConfig } from "../core/config.js";
import { startNodeRouter } from "./server.js";

/**
 * The Node entry: the environment becomes the router's config and logger, server.ts wires the rest, and a
 * signal stops it cleanly.
 * @example PORT=8080 REDIS_URL=redis://127.0.0.1:6379 npm run router
 */
let config: RouterConfig;
try {
  config = parseRouterConfig(process.env);
} catch (error) {
  createJsonLogger({ base: { component: "router" } }).error((error as Error).message);
  process.exit(2);
}
const logger = createJsonLogger({ level: config.logLevel, base: { component: "router" } });
if (config.clusterGrants === undefined) logger.warn(NO_GRANTS_WARNING);
// Listening for the signal before starting: a SIGTERM during start-up (it listens before its first store load
// lands) must still close cleanly, not kill the process the default way.
const stopping = shutdownSignal(logger);
const router = await startNodeRouter(config, { logger, host: config.host });

await stopping;
try {
  await router.close();
  process.exit(0);
} catch (error) {
  logger.error("shutdown failed", { error });
  process.exit(1);
}
