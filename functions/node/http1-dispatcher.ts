import type { ExchangeHandler, OutgoingRequest } from "../../lib/http-exchange.js";
import type { SocketConnector } from "../../lib/http1/connection-socket.js";
import { OriginPool } from "../../lib/http1/origin-pool.js";
import { PoolsByTarget } from "../transports/pools-by-target.js";
import type { UpstreamPoolOptions, UpstreamTarget } from "../transports/upstream.js";
import type { Dispatcher } from "./dispatchers.js";

/** HTTP/1.1 to backends: one keep-alive pool of the router's own client (lib/http1/) per backend. */
export class Http1Dispatcher extends PoolsByTarget<OriginPool> implements Dispatcher {
  /** `connector`: how each connection's socket is opened (TLS: https-dispatcher.ts); default plain TCP. */
  constructor(options: UpstreamPoolOptions = {}, connector?: SocketConnector) {
    const settings = {
      connections: options.connectionsPerBackend ?? 128,
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 4_000,
      responseHeadTimeoutMs: options.responseHeadTimeoutMs ?? 300_000,
      bodyTimeoutMs: options.bodyTimeoutMs ?? 300_000,
    };
    const create = (target: UpstreamTarget) => new OriginPool(target.ip, target.port, settings, connector);
    super({ create, busy: (pool) => pool.busy > 0, close: closePool }, options.idlePoolMs ?? 60_000);
  }

  dispatch(target: UpstreamTarget, request: OutgoingRequest, handler: ExchangeHandler): void {
    this.poolFor(target).dispatch(request, handler);
  }

  /** Lets the requests under way finish, then closes every connection. */
  close(): void {
    for (const pool of this.takeAll()) closePool(pool);
  }

  destroy(): void {
    for (const pool of this.takeAll()) pool.destroy();
  }
}

function closePool(pool: OriginPool): void {
  void pool.close().catch(() => undefined);
}
