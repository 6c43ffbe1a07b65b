import type { Logger } from "./logger.js";

/**
 * A warning about something that stays wrong (a malformed record, key or object) is logged once, not on every
 * request or refresh that meets it again: `warn` logs the first report of a reason under a key and stays quiet
 * while the key holds that reason; another reason under the same key is logged once too. `clear` says the
 * problem went away, so it is logged again should it come back.
 *
 * @example
 * const warnings = createWarnOnce(logger);
 * warnings.warn(`record ${cluster}/${service}`, reason, "skipping invalid service record", { reason });
 * warnings.clear(`record ${cluster}/${service}`); // the record decodes again
 */
export interface WarnOnce {
  /** Logs at warn level unless `key` already holds `reason` (logged and not cleared since); true when it logged. */
  warn(key: string, reason: string, message: string, fields?: Record<string, unknown>): boolean;
  /** The problem under `key` is gone: the next `warn` with it logs again. */
  clear(key: string): void;
  /** Keys held now (for tests). */
  size(): number;
}

/** Keys remembered at most; the oldest is forgotten first, so a flood of distinct keys cannot grow memory. */
export const DEFAULT_WARN_ONCE_KEYS = 10_000;

export function createWarnOnce(logger: Logger, maxKeys = DEFAULT_WARN_ONCE_KEYS): WarnOnce {
  const held = new Map<string, string>();
  return {
    warn(key, reason, message, fields) {
      if (held.get(key) === reason) return false;
      held.delete(key);
      if (held.size >= maxKeys) {
        const oldest = held.keys().next();
        if (!oldest.done) held.delete(oldest.value);
      }
      held.set(key, reason);
      logger.warn(message, fields);
      return true;
    },
    clear(key) {
      if (held.size > 0) held.delete(key);
    },
    size: () => held.size,
  };
}
