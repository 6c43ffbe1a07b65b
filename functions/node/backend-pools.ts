import { OriginPool, type PoolSettings } from "../../lib/http1/origin-pool.js";
import { PoolsByTarget } from "../transports/pools-by-target.js";
import type { UpstreamPoolOptions, UpstreamTarget } from "../transports/upstream.js";

/**
 * The native proxy's connections to its backends: one pool of the HTTP/1.1 client (lib/http1/origin-pool.ts)
 * per backend, closed once unused (transports/pools-by-target.ts).
 */
export interface BackendPools {
  /** The pool of one backend. */
  poolFor(target: UpstreamTarget): OriginPool;
  /** Open pools (for metrics and tests). */
  poolCount(): number;
  /** Lets requests under way finish, then closes every connection. */
  close(): Promise<void>;
  /** Closes every connection at once, failing requests under way. */
  destroy(): Promise<void>;
}

export function createBackendPools(options: UpstreamPoolOptions = {}): BackendPools {
  const settings: PoolSettings = {
    connections: options.connectionsPerBackend ?? 128,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 4_000,
    responseHeadTimeoutMs: options.responseHeadTimeoutMs ?? 300_000,
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
