import type { ExchangeHandler, OutgoingRequest } from "../../../lib/http-exchange.js";
import { PoolsByTarget } from "../../transports/pools-by-target.js";
import type { UpstreamTarget } from "../../transports/upstream.js";
import type { Dispatcher } from "../dispatchers.js";
import { H2cRequest } from "./h2c-request.js";
import { DEFAULT_H2C_SETTINGS, H2cOrigin, type H2cSettings } from "./h2c-session.js";

/** HTTP/2 cleartext to backends (the h2c dispatcher): the sessions of every backend, one H2cOrigin each, closed once unused. */
export class H2cPools extends PoolsByTarget<H2cOrigin> implements Dispatcher {
  constructor(settings: Partial<H2cSettings> = {}) {
    const full: H2cSettings = { ...DEFAULT_H2C_SETTINGS, ...settings };
    const create = (target: UpstreamTarget) => new H2cOrigin(target, full);
    super({ create, busy: (origin) => origin.busy, close: (origin) => origin.close() }, full.idleSessionMs);
  }

  dispatch(target: UpstreamTarget, request: OutgoingRequest, handler: ExchangeHandler): void {
    new H2cRequest(this.poolFor(target), request, handler).start();
  }

  destroy(): void {
    for (const origin of this.takeAll()) origin.destroy();
  }
}
