import { PoolsByTarget } from "../../transports/pools-by-target.js";
import type { UpstreamPoolOptions, UpstreamTarget } from "../../transports/upstream.js";
import { OriginPool, type PoolSettings } from "./origin-pool.js";

/**
 * The Node proxy's own HTTP/1.1 client: keep-alive pools per backend (origin-pool.ts) that write each request
 * head in one piece and hand the response on as it is parsed. It replaced undici on the proxied path because
 * undici validated every field again (processHeader), crossed into its wasm parser once per field and kept a
 * request queue per client; that was most of what the router spent above a minimal proxy (bench/proxy).
 */
export interface UpstreamClient {
  /** The pool of one backend. */
  poolFor(target: UpstreamTarget): OriginPool;
  /** Open pools (for metrics and tests). */
  poolCount(): number;
  /** Lets requests under way finish, then closes every connection. */
  close(): Promise<void>;
  /** Closes every connection at once, failing requests under way. */
  destroy(): Promise<void>;
}

export function createUpstreamClient(options: UpstreamPoolOptions = {}): UpstreamClient {
  const settings: PoolSettings = {
    connections: options.connectionsPerBackend ?? 128,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 4_000,
    bodyTimeoutMs: options.bodyTimeoutMs ?? 300_000,
  };
  const pools = new PoolsByTarget<OriginPool>(
    {
      create: (target) => new OriginPool(target.ip, target.port, settings),
      busy: (pool) => pool.busy > 0,
      close: (pool) => {
        pool.close().catch(() => undefined);
      },
    },
    options.idlePoolMs ?? 60_000,
  );

  return {
    poolFor: (target) => pools.poolFor(target),
    poolCount: () => pools.size,
    close: async () => {
      await Promise.all(pools.takeAll().map((pool) => pool.close()));
    },
    destroy: async () => {
      for (const pool of pools.takeAll()) pool.destroy();
    },
  };
}
