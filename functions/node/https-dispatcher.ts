import type { ExchangeHandler, OutgoingRequest } from "../../lib/http-exchange.js";
import { endpointAddress } from "../../store/records.js";
import type { UpstreamPoolOptions, UpstreamTarget } from "../transports/upstream.js";
import type { Dispatcher } from "./dispatchers.js";
import { Http1Dispatcher } from "./http1-dispatcher.js";
import type { BackendTlsSetup } from "./tls/backend-tls-setup.js";
import type { BackendTlsSetups } from "./tls/backend-tls-source.js";

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
  /** `cluster\npolicy\ngateway` → its current setup and the pools made under it. */
  readonly #byPolicy = new Map<
    string,
    { readonly setup: BackendTlsSetup; readonly pools: Http1Dispatcher }
  >();

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
    this.#poolsOf(setup, target).dispatch(target, request, handler);
  }

  destroy(): void {
    for (const { pools } of this.#byPolicy.values()) pools.destroy();
    this.#byPolicy.clear();
  }

  #poolsOf(setup: BackendTlsSetup, target: UpstreamTarget): Http1Dispatcher {
    // The same policy with another Gateway's client certificate (or none) is another setup, with its own pools.
    const key = `${target.cluster}\n${setup.policy}\n${target.gateway ?? ""}`;
    const current = this.#byPolicy.get(key);
    if (current?.setup === setup) return current.pools;
    // The policy changed since these pools were made: their connections were validated under the old one.
    if (current) this.#retire(key);
    const pools = new Http1Dispatcher(this.#options, setup.connector);
    this.#byPolicy.set(key, { setup, pools });
    return pools;
  }

  /** Closes the pools of `key` (their requests under way finish) and forgets them. */
  #retire(key: string): void {
    this.#byPolicy.get(key)?.pools.close();
    this.#byPolicy.delete(key);
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
