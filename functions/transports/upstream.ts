import { endpointAddress } from "../../store/records.js";
import type { BackendProtocol } from "../../store/services.js";

/**
 * The web path's transport seam between the runtime-agnostic proxy core and a runtime: Workers send with fetch
 * or a VPC binding (fetch.ts); the Node router has its own dispatchers (node/dispatchers.ts) and shares the
 * backend address (UpstreamTarget) and pool options. The core owns
 * retries, timeouts and ejection; a transport only sends, and classifies what failed the same way
 * (connect-errors.ts).
 */
export interface UpstreamTarget {
  /** Canonical IP from the store (never from the request). */
  readonly ip: string;
  readonly port: number;
  /** What the backend speaks; undefined: HTTP/1.1. */
  readonly protocol?: BackendProtocol | undefined;
  /** The cluster whose records describe it (with protocol `https`: its backend TLS records). */
  readonly cluster?: string | undefined;
  /** With protocol `https`: the port's BackendTLSPolicy (`namespace/name`), the TLS setup's key. */
  readonly tls?: { readonly policy: string } | undefined;
  /** With `tls`: the Gateway whose backend client certificate the connection presents, if it has one. */
  readonly gateway?: string | undefined;
}

/** The keep-alive pools of the Node router's HTTP/1.1 dispatcher (node/http1-dispatcher.ts). */
export interface UpstreamPoolOptions {
  /** Connections kept per backend. */
  readonly connectionsPerBackend?: number;
  /** A pool with no request for this long is closed (backends come and go with pods). */
  readonly idlePoolMs?: number;
  /** TCP connect limit; the core's per-try deadline bounds the whole attempt anyway. */
  readonly connectTimeoutMs?: number;
  /** Idle keep-alive connections are closed after this (a server's `Keep-Alive: timeout` hint wins if shorter). */
  readonly keepAliveTimeoutMs?: number;
  /**
   * Longest wait for a response head once the whole request was sent (the native proxy's own client; the core's
   * per-try timeout is shorter and bounds the attempt first).
   */
  readonly responseHeadTimeoutMs?: number;
  /** Longest gap between response body chunks before the response fails. */
  readonly bodyTimeoutMs?: number;
}

export interface UpstreamRequest {
  readonly target: UpstreamTarget;
  readonly method: string;
  /** Origin-form path and query, e.g. `/a/b?c=d`. */
  readonly path: string;
  /** Already cleaned by the core: hop-by-hop removed, forwarding headers set, Host preserved. */
  readonly headers: Headers;
  readonly body: ReadableStream<Uint8Array> | null;
  /** Aborted on the per-try timeout, the total timeout, or when the client goes away. */
  readonly signal: AbortSignal;
}

export interface Upstream {
  /**
   * The transport answers a WebSocket handshake (Upgrade: websocket) with the backend's 101 Response, its
   * `webSocket` attached (Workers' fetch), which the router hands back as is.
   */
  readonly webSockets?: boolean;
  /**
   * Resolves with the upstream's response as is (redirects are not followed, the body streams). Rejects with
   * UpstreamConnectError when nothing reached the backend (safe to retry any method), otherwise any error.
   */
  send(request: UpstreamRequest): Promise<Response>;
}

/** The connection to the backend could not be made: the request was not sent at all. */
export class UpstreamConnectError extends Error {
  override readonly name = "UpstreamConnectError";
  constructor(
    readonly target: UpstreamTarget,
    options?: { cause?: unknown },
  ) {
    super(`cannot connect to ${endpointAddress(target)}`, options);
  }
}

/** `http://ip:port`, IPv6 in brackets: where a transport sends a request for `target`. */
export function originOf(target: UpstreamTarget): string {
  return `http://${endpointAddress(target)}`;
}
