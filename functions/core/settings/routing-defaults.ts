/** CLIENT_BODY_IDLE_TIMEOUT_MS when a caller's config leaves it out; core/settings/config.ts defaults the variable to it. */
export const DEFAULT_CLIENT_BODY_IDLE_TIMEOUT_MS = 60_000;

/**
 * The retry policy's settings (proxy-policy.ts ProxySettings) from the router's config, defaults filled in.
 * Typed by shape, not by ProxySettings: config.ts imports this file, and proxy-policy.ts reaches config.ts.
 */
export function policySettings(config: {
  readonly tryTimeoutMs: number;
  readonly totalTimeoutMs: number;
  readonly retries: number;
  readonly clientBodyIdleTimeoutMs?: number | undefined;
}) {
  return {
    tryTimeoutMs: config.tryTimeoutMs,
    totalTimeoutMs: config.totalTimeoutMs,
    retries: config.retries,
    clientBodyIdleTimeoutMs: config.clientBodyIdleTimeoutMs ?? DEFAULT_CLIENT_BODY_IDLE_TIMEOUT_MS,
  };
}
