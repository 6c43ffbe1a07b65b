import { versionLine } from "../../lib/build-info.js";
import { readCommandLine } from "../../lib/command-line.js";
import { ConfigurationError } from "../../lib/configuration-error.js";
import { EXIT_CODES } from "../../lib/exit-codes.js";
import { createJsonLogger } from "../../lib/logger.js";
import { shutdownSignal } from "../../lib/signals.js";
import { parseRouterConfig, type RouterConfig } from "../core/settings/config.js";
import { NO_GRANTS_WARNING } from "../core/trust/cluster-grants.js";
import { keepRequestObjectsYoung } from "./heap-tuning.js";
import { type NodeRouter, startNodeRouter } from "./server.js";

/**
 * The Node entry: the environment becomes the router's config and logger, server.ts wires the rest, and a
 * signal stops it cleanly. Exit codes: lib/exit-codes.ts.
 * @example PORT=8080 REDIS_URL=redis://127.0.0.1:6379 npm run router
 */
const USAGE = `Usage: node dist/router.js   (development: npm run router)

The Node router takes no flags but --help and --version: every setting is an environment variable (docs/configuration.md),
REDIS_URL, PORT, HOST, EDGESLICE_PREFIX, ADMIN_TOKEN and the rest.
Exit status: 0 stopped by SIGTERM/SIGINT, 1 failed, 2 bad command line, 78 bad setting (environment, an
address to listen on).`;

const startLogger = createJsonLogger({ base: { component: "router" } });
const line = readCommandLine(process.argv.slice(2), {
  command: "node dist/router.js",
  options: {},
  usage: USAGE,
  version: versionLine(),
  print: (text) => process.stdout.write(text),
  logger: startLogger,
});
if (!line.run) process.exit(line.exitCode);
let config: RouterConfig;
try {
  config = parseRouterConfig(process.env);
} catch (error) {
  startLogger.error((error as Error).message);
  process.exit(error instanceof ConfigurationError ? EXIT_CODES.configuration : EXIT_CODES.failure);
}
const logger = createJsonLogger({ level: config.logLevel, base: { component: "router" } });
keepRequestObjectsYoung();
if (config.clusterGrants === undefined) logger.warn(NO_GRANTS_WARNING);
// Listening for the signal before starting: a SIGTERM during start-up (it listens before its first store load
// lands) must still close cleanly, not kill the process the default way.
const stopping = shutdownSignal(logger);
let router: NodeRouter;
try {
  router = await startNodeRouter(config, { logger, host: config.host });
} catch (error) {
  // Exits at once: the Redis client opened before the failure would keep the process running.
  if (error instanceof ConfigurationError) {
    logger.error(error.message);
    process.exit(EXIT_CODES.configuration);
  }
  logger.error("router failed to start", { error });
  process.exit(EXIT_CODES.failure);
}

await stopping;
try {
  await router.close();
  process.exit(EXIT_CODES.ok);
} catch (error) {
  logger.error("shutdown failed", { error });
  process.exit(EXIT_CODES.failure);
}
