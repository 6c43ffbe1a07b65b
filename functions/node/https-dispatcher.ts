import type { ExchangeHandler, OutgoingRequest } from "../../lib/http-exchange.js";
import { OriginPool } from "../../lib/http1/origin-pool.js";
import { endpointAddress } from "../../store/records.js";
import { PoolsByTarget } from "../transports/pools-by-target.js";
import type { UpstreamPoolOptions, UpstreamTarget } from "../transports/upstream.js";
import type { Dispatcher } from "./dispatchers.js";
import { poolSettings } from "./http1-dispatcher.js";
import type { BackendTlsSetup } from "./tls/backend-tls-setup.js";
import type { BackendTlsSetups } from "./tls/backend-tls-source.js";

/** The pools made under one setup (one version of one cluster's policy). */
interface SetupPools {
  readonly setup: BackendTlsSetup;
  readonly pools: PoolsByTarget<OriginPool>;
}

/**
 * HTTP/1.1 over TLS to the backends of a Service port with a BackendTLSPolicy (protocol `https`): the
 * HTTP/1.1 dispatcher's own pools (lib/http1), each connection opened by the policy's TLS setup
 * (tls/backend-tls-setup.ts: SNI, roots, name check). Pools are kept per setup: when a policy's record
 * changes (its CA bundle, hostname or names), the pools of the old setup are closed (their requests under
 * way finish) and no connection validated under it carries another request. A backend whose policy has no
 * usable record is refused as a connect failure would be (a 502 once no backend is left): never cleartext.
 */
export class HttpsDispatcher implements Dispatcher {
  readonly #setups: BackendTlsSetups;
  readonly #options: UpstreamPoolOptions;
  /** `cluster\npolicy` → the pools of its current setup. */
  readonly #byPolicy = new Map<string, SetupPools>();

  constructor(setups: BackendTlsSetups, options: UpstreamPoolOptions = {}) {
    this.#setups = setups;
    this.#options = options;
  }

  dispatch(target: UpstreamTarget, request: OutgoingRequest, handler: ExchangeHandler): void {
    const policy = target.tls?.policy;
    const setup =
      policy !== undefined && target.cluster !== undefined
        ? this.#setups.setupFor(target.cluster, policy, target.gateway)
        : undefined;
    if (setup === undefined) {
      // A policy withdrawn (or no longer loadable): the connections validated under it close now.
      if (policy !== undefined) this.#retire(`${target.cluster}\n${policy}\n${target.gateway ?? ""}`);
      refuse(handler, endpointAddress(target), policy, this.#setups);
      return;
    }
    this.#poolsOf(setup, target).poolFor(target).dispatch(request, handler);
  }

  get origins(): number {
    let origins = 0;
    for (const { pools } of this.#byPolicy.values()) origins += pools.size;
    return origins;
  }

  async close(): Promise<void> {
    await Promise.all(this.#takeAll().map((pool) => pool.close()));
  }

  destroy(): void {
    for (const pool of this.#takeAll()) pool.destroy();
  }

  #poolsOf(setup: BackendTlsSetup, target: UpstreamTarget): PoolsByTarget<OriginPool> {
    // The same policy with another Gateway's client certificate (or none) is another setup, with its own pools.
    const key = `${target.cluster}\n${setup.policy}\n${target.gateway ?? ""}`;
    const current = this.#byPolicy.get(key);
    if (current?.setup === setup) return current.pools;
    // The policy changed since these pools were made: their connections were validated under the old one.
    if (current) this.#retire(key);
    const settings = poolSettings(this.#options);
    const pools = new PoolsByTarget<OriginPool>(
      {
        create: (target) => new OriginPool(target.ip, target.port, settings, setup.connector),
        busy: (pool) => pool.busy > 0,
        close: (pool) => void pool.close().catch(() => undefined),
      },
      this.#options.idlePoolMs ?? 60_000,
    );
    this.#byPolicy.set(key, { setup, pools });
    return pools;
  }

  /** Closes the pools of `cluster\npolicy` (their requests under way finish) and forgets them. */
  #retire(key: string): void {
    const current = this.#byPolicy.get(key);
    if (current === undefined) return;
    this.#byPolicy.delete(key);
    for (const pool of current.pools.takeAll()) void pool.close().catch(() => undefined);
  }

  #takeAll(): OriginPool[] {
    const pools = [...this.#byPolicy.values()].flatMap((entry) => entry.pools.takeAll());
    this.#byPolicy.clear();
    return pools;
  }
}

/** No usable TLS setup for the backend's policy: the attempt fails as a refused connection, soon after. */
function refuse(
  handler: ExchangeHandler,
  address: string,
  policy: string | undefined,
  setups: BackendTlsSetups,
): void {
  const reason = policy === undefined ? "no BackendTLSPolicy named" : "no usable backend TLS record";
  setups.refused(address, policy ?? "-", reason);
  // Aborted or not, onError follows once (lib/http-exchange.ts RequestControl.abort).
  handler.onStart({ abort: () => undefined, resume: () => undefined });
  const error = Object.assign(new Error(`backend ${address}: ${reason} (policy ${policy ?? "none"})`), {
    code: "BACKEND_TLS_UNAVAILABLE",
    syscall: "connect",
  });
  queueMicrotask(() => handler.onError(error));
}
