import type { ProxySettings } from "./proxy-policy.js";

/** CLIENT_BODY_IDLE_TIMEOUT_MS when a caller's config leaves it out; core/config.ts defaults the variable to it. */
export const DEFAULT_CLIENT_BODY_IDLE_TIMEOUT_MS = 60_000;

/** The retry policy's settings from the router's config, defaults filled in. */
export function policySettings(
  config: Omit<ProxySettings, "clientBodyIdleTimeoutMs"> & { readonly clientBodyIdleTimeoutMs?: number },
): ProxySettings {
  return {
    tryTimeoutMs: config.tryTimeoutMs,
    totalTimeoutMs: config.totalTimeoutMs,
    retries: config.retries,
    clientBodyIdleTimeoutMs: config.clientBodyIdleTimeoutMs ?? DEFAULT_CLIENT_BODY_IDLE_TIMEOUT_MS,
  };
}
