import type { Logger } from "./logger.js";

/** The signals a process manager sends to stop a process (Kubernetes: SIGTERM; a terminal: SIGINT). */
export const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"];

/**
 * Resolves with the first of `signals` the process receives, logged as "shutting down". The handlers are
 * removed once it fired, so a second signal during a slow shutdown ends the process the default way.
 *
 * @example
 * const signal = await shutdownSignal(logger);
 * await server.close();
 */
export function shutdownSignal(
  logger: Logger,
  signals: readonly NodeJS.Signals[] = SHUTDOWN_SIGNALS,
): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      logger.info("shutting down", { signal });
      for (const each of signals) process.off(each, onSignal);
      resolve(signal);
    };
    for (const each of signals) process.on(each, onSignal);
  });
}
