import { createJsonLogger } from "../contract/logger.js";
import { parseRouterConfig } from "./config.js";
import { startNodeRouter } from "./node-server.js";

/** `npm run router`: the Node entry. Reads the environment, starts the router, stops cleanly on SIGTERM/SIGINT. */
const config = parseRouterConfig(process.env);
const logger = createJsonLogger({ level: config.logLevel, base: { component: "router" } });
const router = await startNodeRouter(config, { logger, host: process.env.HOST?.trim() || "0.0.0.0" });

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info("shutting down", { signal });
    router.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error("shutdown failed", { error });
        process.exit(1);
      },
    );
  });
}
