import type { ExchangeHandler, OutgoingRequest } from "../../../lib/http-exchange.js";
import { PoolsByTarget } from "../../transports/pools-by-target.js";
import type { UpstreamTarget } from "../../transports/upstream.js";
import type { Dispatcher } from "../dispatchers.js";
import { H2cOrigin } from "./h2c-origin.js";
import { H2cRequest } from "./h2c-request.js";
import { DEFAULT_H2C_SETTINGS, type H2cSettings } from "./h2c-session.js";

/**
 * HTTP/2 cleartext to backends (the h2c dispatcher): the sessions of every backend, one H2cOrigin each, closed
 * once unused (transports/pools-by-target.ts).
 */
export class H2cPools implements Dispatcher {
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
  dispatch(target: UpstreamTarget, request: OutgoingRequest, handler: ExchangeHandler): void {
    new H2cRequest(target, request, handler).start(this.#origins.poolFor(target));
  }

  get origins(): number {
    return this.#origins.size;
  }

  /** GOAWAY on every session: streams under way finish. */
  async close(): Promise<void> {
    for (const origin of this.#origins.takeAll()) origin.close();
  }

  destroy(): void {
    for (const origin of this.#origins.takeAll()) origin.destroy();
  }
}
