import { type Context, Hono } from "hono";
import type { RouterConfig } from "../core/config.js";
import { errorResponse, type RouterError } from "../core/errors.js";
import {
  type ForwardingInfo,
  isWebSocketUpgrade,
  upstreamRequestHeaders,
  upstreamUpgradeHeaders,
} from "../core/headers.js";
import type { PolicyDeps, ProxyResult } from "../core/proxy-policy.js";
import { ADMIN_PREFIX, createRouting, type Routing, type RoutingDeps } from "../core/routing.js";
import type { Selection } from "../core/select.js";
import type { Upstream } from "../transports/upstream.js";
import { registerAdmin } from "./admin.js";
import { type ProxyDeps, proxy } from "./web-proxy.js";

export interface AppDeps extends RoutingDeps {
  readonly upstream: Upstream;
  /** Only the routing fields are read: cluster, zone, ipFamily, adminToken, timeouts, retries. */
  readonly config: RoutingDeps["config"] & Pick<RouterConfig, "adminToken">;
  /** The client's IP as the runtime knows it (Node: socket peer; Workers: CF-Connecting-IP). */
  readonly clientAddress?: (c: Context) => string | undefined;
  /**
   * The scheme of the client's connection (Node: TLS or not). Never the request target's: an absolute-form
   * `GET https://host/ HTTP/1.1` over plain HTTP is still plain HTTP. Default: the scheme of the URL the
   * runtime built (Workers: Cloudflare's, from the visitor's connection).
   */
  readonly clientProto?: (c: Context) => "http" | "https";
  /** A runtime's own proxy (Node: node/proxy.ts); requests it declines take the web path (web-proxy.ts). */
  readonly native?: NativeProxy;
}

/** A routed request, as the native proxy gets it: the same routing and header inputs as the web path. */
export interface NativeRoute {
  readonly selection: Selection;
  /** Origin-form path and query. */
  readonly path: string;
  readonly forwarding: ForwardingInfo;
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
}

/**
 * The runtime-agnostic router: admin endpoints under /_edgeslice/, everything else is routed and proxied.
 * `routing` is built from `deps` unless the runtime shares it with another entry path (Node's upgrades).
 */
export function createApp(deps: AppDeps, routing: Routing = createRouting(deps)): Hono {
  const { policy } = routing;
  const { metrics } = policy;
  const nativeProxy = deps.native;
  const proxyDeps: ProxyDeps = { ...policy, upstream: deps.upstream };

  const app = new Hono();
  app.use(`${ADMIN_PREFIX}/*`, async (c, next) => {
    await next();
    metrics.countResponse(c.res.status);
  });
  registerAdmin(app, {
    source: deps.source,
    adminToken: deps.config.adminToken,
    select: routing.select,
    balancer: policy.balancer,
    ejection: policy.ejection,
    metrics,
    snapshotAgeSeconds: routing.snapshotAgeSeconds,
  });

  app.all("*", async (c) => {
    const routed = await routing.route(c.req.url);
    if (typeof routed === "string") return answer(routed);
    const forwarding: ForwardingInfo = {
      clientIp: deps.clientAddress?.(c),
      proto: deps.clientProto?.(c) ?? routed.target.proto,
      host: routed.target.authority,
    };
    const forwarded = nativeProxy?.forward(
      c.env,
      { selection: routed.selection, path: routed.target.path, forwarding },
      proxyDeps,
    );
    if (nativeProxy && forwarded) {
      const result = await forwarded;
      if (!result.ok) return answer(result.error);
      metrics.countResponse(result.value);
      return nativeProxy.alreadySent;
    }
    // The web path: reading these makes the adapter build a web Request (Node), or is the request (Workers).
    const raw = c.req.raw;
    // A WebSocket handshake passes through where the transport carries it (Workers' fetch); on Node the
    // server's 'upgrade' listener takes upgrades before they reach the app (node/upgrade.ts).
    const upgrade = deps.upstream.webSockets === true && isWebSocketUpgrade(raw.headers);
    const result = await proxy(
      routed.selection,
      {
        method: raw.method,
        path: routed.target.path,
        headers: upgrade
          ? upstreamUpgradeHeaders(raw.headers, forwarding)
          : upstreamRequestHeaders(raw.headers, forwarding),
        body: raw.body,
        signal: raw.signal,
        upgrade,
      },
      proxyDeps,
    );
    if (!result.ok) return answer(result.error);
    metrics.countResponse(result.value.status);
    return result.value;
  });

  function answer(error: RouterError): Response {
    const response = errorResponse(error);
    // Nobody reads it: the client left before the response head, which is no response of the router's.
    if (error === "client_closed") metrics.requests.client_closed++;
    else metrics.countResponse(response.status);
    return response;
  }

  return app;
}
