import { type Context, Hono } from "hono";
import type { Logger } from "../contract/logger.js";
import type { Snapshot, SnapshotSource } from "../contract/store.js";
import { ADMIN_PREFIX, registerAdmin } from "./admin.js";
import { Balancer, type BalancingMode } from "./balancer.js";
import type { RouterConfig } from "./config.js";
import { type EjectionOptions, PassiveEjection } from "./ejection.js";
import { errorResponse } from "./errors.js";
import { upstreamRequestHeaders } from "./headers.js";
import { RouterMetrics } from "./metrics.js";
import { proxy } from "./proxy.js";
import { lookupRoute, normaliseHost, routeIndexOf } from "./route-index.js";
import { createSelector } from "./select.js";
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
}

/** The runtime-agnostic router: admin endpoints under /_edgeslice/, everything else is routed and proxied. */
export function createApp(deps: AppDeps): Hono {
  const { config } = deps;
  const balancer = new Balancer(deps.balancing, deps.random);
  const ejection = new PassiveEjection(deps.now, deps.ejection);
  const metrics = new RouterMetrics();
  const select = createSelector({ ipFamily: config.ipFamily, cluster: config.cluster, zone: config.zone });
  const proxyDeps = {
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
    const response = await route(c);
    metrics.countResponse(response.status);
    return response;
  });

  async function route(c: Context): Promise<Response> {
    const target = requestTarget(c.req.url);
    if (!target) return errorResponse("bad_request");
    const snapshot = await deps.source.current();
    // Redis down with nothing ever loaded: no backend is known (DESIGN.md "Router function").
    if (!snapshot) return errorResponse("no_endpoints");
    snapshotAgeSeconds(snapshot);
    const host = normaliseHost(target.authority);
    if (host === undefined) return errorResponse("no_route");
    const entry = lookupRoute(routeIndexOf(snapshot), host, target.path);
    if (!entry) return errorResponse("no_route");
    const selection = select(entry);
    if (selection.addresses.length === 0) return errorResponse("no_endpoints");
    const raw = c.req.raw;
    const headers = upstreamRequestHeaders(raw.headers, {
      clientIp: deps.clientAddress?.(c),
      proto: target.proto,
      host: target.authority,
    });
    return proxy(
      selection,
      {
        method: raw.method,
        path: target.path,
        headers,
        body: raw.body,
        signal: raw.signal,
      },
      proxyDeps,
    );
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
