import type { ExchangeHandler, OutgoingRequest } from "../../lib/http-exchange.js";
import { OriginPool, type PoolSettings } from "../../lib/http1/origin-pool.js";
import { PoolsByTarget } from "../transports/pools-by-target.js";
import type { UpstreamPoolOptions, UpstreamTarget } from "../transports/upstream.js";
import type { Dispatcher } from "./dispatchers.js";

/** The limits of each backend's pool (the HTTPS dispatcher's too: https-dispatcher.ts). */
export function poolSettings(options: UpstreamPoolOptions): PoolSettings {
  return {
    connections: options.connectionsPerBackend ?? 128,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 4_000,
    responseHeadTimeoutMs: options.responseHeadTimeoutMs ?? 300_000,
    bodyTimeoutMs: options.bodyTimeoutMs ?? 300_000,
  };
}

/** HTTP/1.1 to backends: one keep-alive pool of the router's own client (lib/http1/) per backend. */
export class Http1Dispatcher implements Dispatcher {
  readonly #pools: PoolsByTarget<OriginPool>;

  constructor(options: UpstreamPoolOptions = {}) {
    const settings = poolSettings(options);
    this.#pools = new PoolsByTarget<OriginPool>(
      {
        create: (target) => new OriginPool(target.ip, target.port, settings),
        busy: (pool) => pool.busy > 0,
        close: (pool) => void pool.close().catch(() => undefined),
      },
      options.idlePoolMs ?? 60_000,
    );
  }

  dispatch(target: UpstreamTarget, request: OutgoingRequest, handler: ExchangeHandler): void {
    this.#pools.poolFor(target).dispatch(request, handler);
  }

  /** The pool of one backend (tests). */
  poolFor(target: UpstreamTarget): OriginPool {
    return this.#pools.poolFor(target);
  }

  get origins(): number {
    return this.#pools.size;
  }

  async close(): Promise<void> {
    await Promise.all(this.#pools.takeAll().map((pool) => pool.close()));
  }

  destroy(): void {
    for (const pool of this.#pools.takeAll()) pool.destroy();
  }
}
