import type { Logger } from "../../lib/logger.js";
import type { Snapshot, SnapshotSource } from "../../store/store.js";
import { Balancer, type BalancingMode } from "./balancer.js";
import type { RouterConfig } from "./config.js";
import { type EjectionOptions, PassiveEjection } from "./ejection.js";
import type { RouterError } from "./errors.js";
import { RouterMetrics } from "./metrics.js";
import type { PolicyDeps } from "./proxy-policy.js";
import { lookupRoute, normaliseHost, type RouteEntry, routeIndexOf } from "./route-index.js";
import { createSelector, type Selection } from "./select.js";

/**
 * The routing core every entry path shares: the Hono catch-all (app/app.ts) and the Node upgrade path
 * (node/upgrade.ts) route with the same function over the same balancer, ejection and metrics, so a
 * request, upgraded or not, can only ever reach a backend the store lists.
 */
export interface RoutingDeps {
  readonly source: SnapshotSource;
  /** Only the routing fields are read: cluster, zone, ipFamily, timeouts, retries. */
  readonly config: Pick<
    RouterConfig,
    "cluster" | "zone" | "ipFamily" | "tryTimeoutMs" | "totalTimeoutMs" | "retries"
  > &
    Partial<Pick<RouterConfig, "clientBodyIdleTimeoutMs">>;
  readonly now: () => number;
  readonly random: () => number;
  readonly balancing: BalancingMode;
  readonly logger: Logger;
  /** Tuning of passive ejection; defaults in ejection.ts. */
  readonly ejection?: Partial<EjectionOptions>;
}

/** A route matched but none of its backends can be used (503): its selection labels the answer. */
export interface Unserved {
  readonly error: "no_endpoints";
  readonly selection: Selection;
}

/** A request the store has backends for. */
export interface Routed {
  readonly target: RequestTarget;
  readonly selection: Selection;
}

export interface Routing {
  /** Balancer, ejection, metrics, logger and settings: what every transport's policy runs on. */
  readonly policy: PolicyDeps;
  readonly select: (route: RouteEntry) => Selection;
  /** Seconds since this router first saw the snapshot's version. */
  snapshotAgeSeconds(snapshot: Snapshot): number;
  /** Routes the URL the runtime built for a request (Host and path); an error names the contract's answer. */
  route(url: string): Promise<RouterError | Unserved | Routed>;
}

export function createRouting(deps: RoutingDeps): Routing {
  const { config } = deps;
  const select = createSelector({ ipFamily: config.ipFamily, cluster: config.cluster, zone: config.zone });
  const policy: PolicyDeps = {
    balancer: new Balancer(deps.balancing, deps.random),
    ejection: new PassiveEjection(deps.now, deps.ejection),
    metrics: new RouterMetrics(),
    logger: deps.logger,
    settings: {
      tryTimeoutMs: config.tryTimeoutMs,
      totalTimeoutMs: config.totalTimeoutMs,
      retries: config.retries,
      clientBodyIdleTimeoutMs: config.clientBodyIdleTimeoutMs ?? DEFAULT_CLIENT_BODY_IDLE_TIMEOUT_MS,
    },
  };
  let seen = { version: -1, at: 0 };
  const snapshotAgeSeconds = (snapshot: Snapshot) => {
    if (snapshot.version !== seen.version) seen = { version: snapshot.version, at: deps.now() };
    return Math.max(0, (deps.now() - seen.at) / 1000);
  };

  return {
    policy,
    select,
    snapshotAgeSeconds,
    async route(url) {
      const target = requestTarget(url);
      if (!target) return "bad_request";
      // The admin prefix is the router's own (Hono serves it before the catch-all); never proxied.
      if (isAdminPath(target.path)) return "no_route";
      const host = normaliseHost(target.authority);
      if (host === undefined) return "no_route";
      if (!isHostSyntax(host)) return "bad_request";
      const snapshot = await deps.source.current();
      // Nothing loaded yet (the Node router listens before its first load), or Redis down with nothing ever
      // loaded: no backend is known (DESIGN.md "Router function").
      if (!snapshot) return "no_snapshot";
      snapshotAgeSeconds(snapshot);
      const entry = lookupRoute(routeIndexOf(snapshot), host, target.path);
      if (!entry || !wildcardCovers(entry.host, host)) return "no_route";
      const selection = select(entry);
      if (selection.addresses.length === 0) return { error: "no_endpoints", selection };
      return { target, selection };
    },
  };
}

/**
 * RFC 9112 §3.2 with RFC 3986 §3.2.2: a Host is an IP-literal or a reg-name (unreserved, pct-encoded and
 * sub-delims characters); anything else (`"`, `{`, a backquote, which the WHATWG URL parser lets through) is
 * an invalid field value, answered 400. `host` is lower case, without port (normaliseHost).
 */
export function isHostSyntax(host: string): boolean {
  if (host.startsWith("[")) return /^\[[0-9a-f:.]+\]$/.test(host);
  return /^(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})+$/.test(host);
}

/** RFC 1123 §2.1 host name label: letters, digits, inner hyphens, 1-63 characters. */
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A wildcard route (`*.example.com`) covers one more label that is a DNS label (Ingress host rules), never
 * any text before the first dot (`a"b.example.com`, or `*.example.com` itself); an exact route covers its host.
 */
export function wildcardCovers(routeHost: string, host: string): boolean {
  if (!routeHost.startsWith("*.")) return true;
  return DNS_LABEL.test(host.slice(0, host.indexOf(".")));
}

/** CLIENT_BODY_IDLE_TIMEOUT_MS when a caller's config leaves it out (core/config.ts has the same default). */
export const DEFAULT_CLIENT_BODY_IDLE_TIMEOUT_MS = 60_000;

/** The router's own endpoints (app/admin.ts); nothing under this prefix is ever proxied. */
export const ADMIN_PREFIX = "/_edgeslice";

/**
 * Whether an origin-form path is under the admin prefix as Hono matches it: on the path without its query,
 * percent-decoded the way decodeURI does (so `/%5Fedgeslice/x` is reserved, `/_edgeslice%2Fx` is not).
 */
export function isAdminPath(path: string): boolean {
  const query = path.indexOf("?");
  let only = query < 0 ? path : path.slice(0, query);
  if (only.includes("%")) {
    try {
      only = decodeURI(only);
    } catch {
      // Not decodable: Hono matches the raw path too.
    }
  }
  return only === ADMIN_PREFIX || only.startsWith(`${ADMIN_PREFIX}/`);
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
