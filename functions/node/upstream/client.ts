import type { UpstreamTarget } from "../../transports/upstream.js";
import { OriginPool, type PoolSettings } from "./origin-pool.js";

/**
 * The Node proxy's own HTTP/1.1 client: keep-alive pools per backend (origin-pool.ts) that write each request
 * head in one piece and hand the response on as it is parsed. It replaced undici on the proxied path because
 * undici validated every field again (processHeader), crossed into its wasm parser once per field and kept a
 * request queue per client; that was most of what the router spent above a minimal proxy (bench/proxy).
 */
export interface UpstreamClientOptions {
  /** Connections kept per backend. */
  readonly connectionsPerBackend?: number;
  /** A pool with no request for this long is closed (backends come and go with pods). */
  readonly idlePoolMs?: number;
  /** TCP connect limit; the core's per-try deadline bounds the whole attempt anyway. */
  readonly connectTimeoutMs?: number;
  /** Idle keep-alive connections are closed after this (a server's `Keep-Alive: timeout` hint wins if shorter). */
  readonly keepAliveTimeoutMs?: number;
  /** Longest gap between response body chunks before the response fails. */
  readonly bodyTimeoutMs?: number;
}

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

export function createUpstreamClient(options: UpstreamClientOptions = {}): UpstreamClient {
  const settings: PoolSettings = {
    connections: options.connectionsPerBackend ?? 128,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 4_000,
    bodyTimeoutMs: options.bodyTimeoutMs ?? 300_000,
  };
  const idlePoolMs = options.idlePoolMs ?? 60_000;
  const pools = new Map<string, OriginPool>();
  // Backends are the same objects for as long as a snapshot serves them (core/select.ts memoises them), so a
  // proxied request finds its pool without building the origin string and hashing it.
  const byTarget = new WeakMap<UpstreamTarget, OriginPool>();

  const poolFor = (target: UpstreamTarget): OriginPool => {
    let pool = byTarget.get(target);
    if (pool === undefined || pool.retired) {
      const key = `${target.ip}|${target.port}`;
      pool = pools.get(key);
      if (pool === undefined) {
        pool = new OriginPool(target.ip, target.port, settings);
        pools.set(key, pool);
      }
      byTarget.set(target, pool);
    }
    pool.used = true;
    return pool;
  };

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [key, pool] of pools) {
        if (pool.used) {
          pool.used = false;
          pool.lastUsedAt = now;
          continue;
        }
        if (pool.lastUsedAt > now - idlePoolMs || pool.busy > 0) continue;
        pool.retired = true;
        pools.delete(key);
        pool.close().catch(() => undefined);
      }
    },
    Math.max(1_000, Math.min(idlePoolMs, 30_000)),
  );
  sweep.unref();

  const retireAll = () => {
    clearInterval(sweep);
    const all = [...pools.values()];
    pools.clear();
    for (const pool of all) pool.retired = true;
    return all;
  };

  return {
    poolFor,
    poolCount: () => pools.size,
    close: async () => {
      await Promise.all(retireAll().map((pool) => pool.close()));
    },
    destroy: async () => {
      for (const pool of retireAll()) pool.destroy();
    },
  };
}
