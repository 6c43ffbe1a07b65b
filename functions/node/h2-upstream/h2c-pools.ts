import type { ExchangeDispatcher, OutgoingRequest } from "../../../lib/http1/exchange-handler.js";
import { PoolsByTarget } from "../../transports/pools-by-target.js";
import type { UpstreamTarget } from "../../transports/upstream.js";
import type { BackendPools } from "../backend-pools.js";
import type { NodeProxyTransport } from "../proxy.js";
import { H2cOrigin } from "./h2c-origin.js";
import { type H2cExchangeHandler, H2cRequest } from "./h2c-request.js";
import { DEFAULT_H2C_SETTINGS, type H2cSettings } from "./h2c-session.js";

/** The h2c sessions of every backend, one H2cOrigin each, closed once unused (transports/pools-by-target.ts). */
export class H2cPools {
  readonly #origins: PoolsByTarget<H2cOrigin>;

  constructor(settings: Partial<H2cSettings> = {}) {
    const full: H2cSettings = { ...DEFAULT_H2C_SETTINGS, ...settings };
    this.#origins = new PoolsByTarget<H2cOrigin>(
      {
        create: (target) => new H2cOrigin(target, full),
        busy: (origin) => origin.busy,
        close: (origin) => origin.close(),
      },
      full.idleSessionMs,
    );
  }

  /** Sends `request` to `target` over h2c; `handler` hears its head, body, trailers and end. */
  dispatch(target: UpstreamTarget, request: OutgoingRequest, handler: H2cExchangeHandler): void {
    new H2cRequest(target, request, handler).start(this.#origins.poolFor(target));
  }

  /** The dispatcher of one backend, as the Node proxy's Exchange asks for it. */
  dispatcherFor(target: UpstreamTarget): ExchangeDispatcher {
    return { dispatch: (request, handler) => this.dispatch(target, request, handler) };
  }

  get originCount(): number {
    return this.#origins.size;
  }

  /** GOAWAY on every session: streams under way finish. */
  close(): void {
    for (const origin of this.#origins.takeAll()) origin.close();
  }

  destroy(): void {
    for (const origin of this.#origins.takeAll()) origin.destroy();
  }
}

/** The Node proxy's transport: h2c backends over H2cPools, every other one over the HTTP/1.1 pools. */
export interface ProtocolPools extends NodeProxyTransport, Omit<BackendPools, "poolFor"> {
  readonly h2c: H2cPools;
}

export function withH2cBackends(http1: BackendPools, settings: Partial<H2cSettings> = {}): ProtocolPools {
  const h2c = new H2cPools(settings);
  return {
    h2c,
    poolFor: (target) => (target.protocol === "h2c" ? h2c.dispatcherFor(target) : http1.poolFor(target)),
    poolCount: () => http1.poolCount() + h2c.originCount,
    close: async () => {
      h2c.close();
      await http1.close();
    },
    destroy: async () => {
      h2c.destroy();
      await http1.destroy();
    },
  };
}
