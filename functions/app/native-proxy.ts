import type { ErrorAnswer } from "../core/errors.js";
import type { CompiledModifier } from "../core/filters.js";
import type { ForwardingInfo } from "../core/headers.js";
import type { PolicyDeps, ProxyResult } from "../core/proxy-policy.js";
import type { RequestObservation } from "../core/request-observation.js";
import type { Selection } from "../core/selection.js";

/** A routed request, as the native proxy gets it: the same routing and header inputs as the web path. */
export interface NativeRoute {
  readonly selection: Selection;
  /** Origin-form path and query sent upstream (the route's URLRewrite applied). */
  readonly path: string;
  /** The route's ResponseHeaderModifier (core/filters.ts). */
  readonly responseHeaders: CompiledModifier | undefined;
  readonly forwarding: ForwardingInfo;
  /** Metrics and access log of this request (core/request-observation.ts). */
  readonly observation: RequestObservation;
  /** Writes the access log line; set only for a sampled request. Call once the response ended. */
  readonly logEnd: (() => void) | undefined;
}

/**
 * Proxies on the runtime's own request/response objects (found in Hono's `c.env`) with the shared policy.
 * `forward` returns undefined for a request it does not handle; otherwise it resolves with the status it
 * sent, or with the error for the app to answer.
 */
export interface NativeProxy {
  /** What the handler returns once the response went out natively. */
  readonly alreadySent: Response;
  forward(env: unknown, route: NativeRoute, deps: PolicyDeps): Promise<ProxyResult<number>> | undefined;
  /**
   * Writes a router answer on the runtime's objects when a web Response cannot carry it as it must be sent (a
   * gRPC error to an HTTP/2 client: one HEADERS frame that ends the stream); true when it did.
   */
  answer?(env: unknown, answer: ErrorAnswer): boolean;
}
