import { type Context, Hono } from "hono";
import type { Logger } from "../contract/logger.js";
import type { Snapshot, SnapshotSource } from "../contract/store.js";
import { ADMIN_PREFIX, registerAdmin } from "./admin.js";
import { Balancer, type BalancingMode } from "./balancer.js";
import type { RouterConfig } from "./config.js";
import { type EjectionOptions, PassiveEjection } from "./ejection.js";
import { errorResponse, type RouterError } from "./errors.js";
import { type ForwardingInfo, upstreamRequestHeaders } from "./headers.js";
import { RouterMetrics } from "./metrics.js";
import { type ProxyDeps, proxy } from "./proxy.js";
import type { PolicyDeps, ProxyResult } from "./proxy-policy.js";
import { lookupRoute, normaliseHost, routeIndexOf } from "./route-index.js";
import { createSelector, type Selection } from "./select.js";
import type { Upstream } from "./upstream.js";

export type { BalancingMode } from "./balancer.js";
export { createFetchUpstream } from "./fetch-upstream.js";

export interface AppDeps {
  readonly source: SnapshotSource;
  readonly upstream: Upstream;
  /** Only the routing fields are read: cluster, zone, ipFamily, adminToken, timeouts, retries. */
  readonly config: Pick<
    RouterConfig,
    "cluster" | "zone" | "ipFamily" | "adminToken" | "tryTimeoutMs" | "totalTimeoutMs" | "retries"
  >;
  readonly now: () => number;
  readonly random: () => number;
  readonly balancing: BalancingMode;
  readonly logger: Logger;
  /** The client's IP as the runtime knows it (Node: socket peer; Workers: CF-Connecting-IP). */
  readonly clientAddress?: (c: Context) => string | undefined;
  /** Tuning of passive ejection; defaults in ejection.ts. */
  readonly ejection?: Partial<EjectionOptions>;
  /** A runtime's own proxy (Node: node-proxy.ts); requests it declines take the web path. */
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

/** The runtime-agnostic router: admin endpoints under /_edgeslice/, everything else is routed and proxied. */
export function createApp(deps: AppDeps): Hono {
  const { config } = deps;
  const balancer = new Balancer(deps.balancing, deps.random);
  const ejection = new PassiveEjection(deps.now, deps.ejection);
  const metrics = new RouterMetrics();
  const select = createSelector({ ipFamily: config.ipFamily, cluster: config.cluster, zone: config.zone });
  const nativeProxy = deps.native;
  const proxyDeps: ProxyDeps = {
    upstream: deps.upstream,
    balancer,
    ejection,
    metrics,
    logger: deps.logger,
    settings: {
      tryTimeoutMs: config.tryTimeoutMs,
      totalTimeoutMs: config.totalTimeoutMs,
      retries: config.retries,
    },
  };
  let seen = { version: -1, at: 0 };
  const snapshotAgeSeconds = (snapshot: Snapshot) => {
    if (snapshot.version !== seen.version) seen = { version: snapshot.version, at: deps.now() };
    return Math.max(0, (deps.now() - seen.at) / 1000);
  };

  const app = new Hono();
  app.use(`${ADMIN_PREFIX}/*`, async (c, next) => {
    await next();
    metrics.countResponse(c.res.status);
  });
  registerAdmin(app, {
    source: deps.source,
    adminToken: config.adminToken,
    select,
    balancer,
    ejection,
    metrics,
    snapshotAgeSeconds,
  });

  app.all("*", async (c) => {
    const routed = await route(c);
    if (typeof routed === "string") return answer(routed);
    const forwarding: ForwardingInfo = {
      clientIp: deps.clientAddress?.(c),
      proto: routed.target.proto,
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
    const response = await proxy(
      routed.selection,
      {
        method: raw.method,
        path: routed.target.path,
        headers: upstreamRequestHeaders(raw.headers, forwarding),
        body: raw.body,
        signal: raw.signal,
      },
      proxyDeps,
    );
    metrics.countResponse(response.status);
    return response;
  });

  function answer(error: RouterError): Response {
    const response = errorResponse(error);
    metrics.countResponse(response.status);
    return response;
  }

  async function route(c: Context): Promise<RouterError | { target: RequestTarget; selection: Selection }> {
    const target = requestTarget(c.req.url);
    if (!target) return "bad_request";
    const snapshot = await deps.source.current();
    // Redis down with nothing ever loaded: no backend is known (DESIGN.md "Router function").
    if (!snapshot) return "no_endpoints";
    snapshotAgeSeconds(snapshot);
    const host = normaliseHost(target.authority);
    if (host === undefined) return "no_route";
    const entry = lookupRoute(routeIndexOf(snapshot), host, target.path);
    if (!entry) return "no_route";
    const selection = select(entry);
    if (selection.addresses.length === 0) return "no_endpoints";
    return { target, selection };
  }

  return app;
}

export interface RequestTarget {
  readonly proto: "http" | "https";
  /** Host[:port] the request was made to (Host header, or an absolute-form target's authority). */
  readonly authority: string;
  /** Origin form: path and query, dot segments resolved. */
  readonly path: string;
}

const SUSPICIOUS = /[@\\]|%2e|\/\.\.?(?:[/?#]|$)/i;

/**
 * The routed authority and origin-form path, taken from the request URL the runtime built (both Node's
 * adapter and Workers resolve dot segments, %2e included, per the WHATWG URL standard). Anything unusual
 * goes through the URL parser again, so a path the router matched is exactly the path the backend gets.
 */
export function requestTarget(url: string): RequestTarget | undefined {
  let proto: "http" | "https";
  let rest: string;
  if (url.startsWith("http://")) {
    proto = "http";
    rest = url.slice(7);
  } else if (url.startsWith("https://")) {
    proto = "https";
    rest = url.slice(8);
  } else return undefined;
  if (SUSPICIOUS.test(rest)) return parsedTarget(url, proto);
  const slash = rest.indexOf("/");
  const hash = rest.indexOf("#");
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  let path = slash < 0 ? "/" : rest.slice(slash);
  if (hash >= 0) path = path.slice(0, path.indexOf("#"));
  if (authority === "") return undefined;
  return { proto, authority, path };
}

function parsedTarget(url: string, proto: "http" | "https"): RequestTarget | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.host === "") return undefined;
  return { proto, authority: parsed.host, path: `${parsed.pathname}${parsed.search}` };
}
