import { authorityPort } from "../../lib/authority.js";
import type { Logger } from "../../lib/logger.js";
import { corsOutcome } from "../../store/filters/cors.js";
import { type CompiledModifier, thenModifier } from "../../store/filters/header-modifier.js";
import { redirectLocation } from "../../store/filters/request-redirect.js";
import { rewrittenUpstream } from "../../store/filters/url-rewrite.js";
import type { Snapshot, SnapshotSource } from "../../store/store.js";
import { Balancer, type BalancingMode } from "./balancer.js";
import { claimRank } from "./cluster-grants.js";
import type { RouterConfig } from "./config.js";
import { type EjectionOptions, PassiveEjection } from "./ejection.js";
import type { RouterError } from "./errors.js";
import { DEFAULT_FAIL_STATIC_MAX_MS, FailStaticBound } from "./fail-static-bound.js";
import { type RulePlan, rulePlan } from "./filters.js";
import { wildcardCovers } from "./hosts.js";
import { RouterMetrics } from "./metrics.js";
import { isMisdirected } from "./misdirected.js";
import type { PolicyDeps } from "./proxy-policy.js";
import { type CheckedTarget, checkedTarget, type RequestTarget } from "./request-target.js";
import { effectivePort } from "./routes/listener-ports.js";
import { type MirrorTarget, mirrorTargets } from "./routes/mirrors.js";
import type { RequestFacts } from "./routes/request-match.js";
import { matchRoute, type RouteMatchResult } from "./routes/route-table.js";
import { chooseBackend } from "./routes/weights.js";
import { policySettings } from "./routing-defaults.js";
import { createSelector, type SelectFor } from "./select.js";
import type { Selection } from "./selection.js";
import type { ServedRoute, SnapshotRoutes } from "./served-routes.js";
import { RouteReports } from "./snapshot-reports.js";
import type { ClientLocation } from "./steering/origin.js";
import {
  createRoutingSteering,
  type RoutingSteering,
  type RoutingSteeringDeps,
} from "./steering/routing-steering.js";

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
    Partial<
      Pick<RouterConfig, "clientBodyIdleTimeoutMs" | "clusterGrants" | "gateways" | "failStaticMaxMs">
    > &
    RoutingSteeringDeps["config"];
  readonly now: () => number;
  readonly random: () => number;
  readonly balancing: BalancingMode;
  readonly logger: Logger;
  /** Tuning of passive ejection; defaults in ejection.ts. */
  readonly ejection?: Partial<EjectionOptions>;
  /** Tuning of cross-cluster steering; defaults in steering/settings.ts. */
  readonly steering?: RoutingSteeringDeps["steering"];
  /**
   * Which certificate a TLS handshake for a name gets (compared by identity), where the runtime ends TLS itself
   * (Node's HTTPS listener): a host that would get another certificate than the SNI did is answered 421.
   */
  readonly certificateOf?: (name: string) => unknown;
  /**
   * The runtime opens TLS to backends as their BackendTLSPolicy says; without it (Workers: fetch cannot set the
   * SNI or the roots) a backend whose port asks for TLS is never sent to (`backend_tls_unsupported`).
   */
  readonly backendTls?: boolean;
}

/** A route matched but none of its backends can be used (503): its selection labels the answer. */
export interface Unserved {
  readonly error: "no_endpoints";
  readonly selection: Selection;
}

/** A rule with a RequestRedirect: the router answers it itself. */
export interface Redirected {
  readonly redirect: { readonly status: number; readonly location: string };
}

/** A CORS preflight of a rule with a CORS filter: the router answers it 200 with these fields (cors.ts). */
export interface Preflighted {
  readonly preflight: readonly (readonly [string, string])[];
}

/** A request the store has backends for. */
export interface Routed {
  readonly target: RequestTarget;
  readonly selection: Selection;
  /** Origin-form path and query sent upstream: the request's, or URLRewrite's. */
  readonly upstreamPath: string;
  /** The Host sent upstream when URLRewrite sets one. */
  readonly upstreamHost: string | undefined;
  /** The rule's header modifiers (filters.ts). */
  readonly plan: RulePlan;
  /** Copies of the request to send and forget (RequestMirror, routes/mirrors.ts). */
  readonly mirrors: readonly MirrorTarget[];
}

/** What routing reads of a request besides its URL. */
export interface RoutingRequest {
  readonly method: string;
  /** Looked up only when a route matches on headers. */
  readonly headers: RequestFacts["headers"];
  /** The scheme of the client's connection, for redirects; default: the URL's. */
  readonly proto?: "http" | "https";
  /** The TLS SNI of the client's connection (RequestFacts.serverName). */
  readonly serverName?: string | undefined;
  /**
   * The Gateway listener port the client's connection was made to, when the router's port says it (Node: a
   * port of HTTPS_LISTENER_PORTS, core/tls-ports.ts); the port of a Host that names one comes first.
   */
  readonly listenerPort?: number | undefined;
  /** Where the client is, when the runtime knows (Workers: `request.cf`): proximity steering measures from it. */
  readonly client?: ClientLocation | undefined;
}

export interface Routing {
  /** The store's snapshots with the fail-static bound applied: what every entry path and endpoint reads. */
  readonly source: FailStaticBound;
  /** Balancer, ejection, metrics, logger and settings: what every transport's policy runs on. */
  readonly policy: PolicyDeps;
  /** The selection of one backendRef of one rule of a served route, memoised per snapshot. */
  readonly select: SelectFor;
  /** What this router (process or isolate) observed of each cluster, and where it is (ROUTER_LOCATION). */
  readonly steering: RoutingSteering;
  /**
   * The snapshot's routes (built once per snapshot, CLUSTER_GRANTS applied); conflicts across clusters and
   * refusals of the grants are logged once (snapshot-reports.ts).
   */
  routesOf(snapshot: Snapshot): SnapshotRoutes;
  /** Seconds since this router first saw the snapshot's version. */
  snapshotAgeSeconds(snapshot: Snapshot): number;
  /** Routes the URL the runtime built for a request (Host and path); an error names the contract's answer. */
  route(url: string, request: RoutingRequest): Promise<RoutingOutcome>;
  /**
   * The same without a promise when the source holds its snapshot in memory (Node's sources do): the Node
   * listener routes every proxied request this way, with no promise per request.
   */
  routeNow(url: string, request: RoutingRequest): RoutingOutcome | Promise<RoutingOutcome>;
}

export type RoutingOutcome = RouterError | Unserved | Redirected | Preflighted | Routed;

export function createRouting(deps: RoutingDeps): Routing {
  const { config } = deps;
  const source = new FailStaticBound(deps.source, {
    maxStaleMs: config.failStaticMaxMs ?? DEFAULT_FAIL_STATIC_MAX_MS,
    now: deps.now,
    logger: deps.logger,
  });
  const metrics = new RouterMetrics();
  const steering = createRoutingSteering(deps, metrics.steering);
  const { ipFamily, cluster, zone } = config;
  const select = createSelector({
    ipFamily,
    cluster,
    zone,
    steering: steering.planning,
    backendTls: deps.backendTls === true,
  });
  const policy: PolicyDeps = {
    balancer: new Balancer(deps.balancing, deps.random),
    ejection: new PassiveEjection(deps.now, deps.ejection),
    metrics,
    logger: deps.logger,
    settings: policySettings(config),
  };
  let seen = { version: -1, at: 0 };
  /** When this router first saw the snapshot's version: read on every request, so no clock read unless new. */
  const noteSeen = (snapshot: Snapshot) => {
    if (snapshot.version !== seen.version) seen = { version: snapshot.version, at: deps.now() };
  };
  const snapshotAgeSeconds = (snapshot: Snapshot) => {
    noteSeen(snapshot);
    return Math.max(0, (deps.now() - seen.at) / 1000);
  };
  const reports = new RouteReports(deps.logger, policy.metrics, config.clusterGrants, config.gateways);
  const routesOf = (snapshot: Snapshot) => reports.routesOf(snapshot);

  return {
    source,
    policy,
    select,
    steering,
    routesOf,
    snapshotAgeSeconds,
    route: async (url, request) => routeNow(url, request),
    routeNow,
  };

  function routeNow(url: string, request: RoutingRequest): RoutingOutcome | Promise<RoutingOutcome> {
    const checked = checkedTarget(url);
    if (typeof checked === "string") return checked;
    const current = source.current();
    return current instanceof Promise
      ? current.then((snapshot) => routeTarget(snapshot, checked, request))
      : routeTarget(current, checked, request);
  }

  function routeTarget(
    snapshot: Snapshot | undefined,
    { target, host }: CheckedTarget,
    request: RoutingRequest,
  ): RoutingOutcome {
    // Nothing loaded yet (the Node router listens before its first load), or Redis down with nothing ever
    // loaded: no backend is known (docs/design.md "Router", rule 4).
    if (!snapshot) return "no_snapshot";
    noteSeen(snapshot);
    const routes = routesOf(snapshot);
    const port = authorityPort(target.authority) ?? request.listenerPort;
    if (misdirected(routes, host, port, request.serverName, deps)) return "misdirected_request";
    const found = matchRequest(routes, host, {
      path: target.path,
      method: request.method,
      headers: request.headers,
      port,
      serverName: request.serverName,
    });
    if (!found) return "no_route";
    const { rule } = found;
    const { redirect, rewrite, cors } = rule.filters;
    const corsAnswer = cors ? corsOutcome(cors, request) : undefined;
    if (corsAnswer && "preflight" in corsAnswer) return corsAnswer;
    if (redirect) {
      const from = {
        proto: request.proto ?? target.proto,
        authority: target.authority,
        host,
        path: target.path,
      };
      return {
        redirect: { status: redirect.statusCode, location: redirectLocation(redirect, from, found.match) },
      };
    }
    const choice = chooseBackend(rule.backends, deps.random);
    if (choice.kind !== "service") return "invalid_backend";
    const selection = steering.steer(select(found.entry, found.ruleIndex, choice.index), request.client);
    if (selection.backendTlsRefused) return "backend_tls_unsupported";
    if (selection.unresolved) return "invalid_backend";
    if (selection.addresses.length === 0) return { error: "no_endpoints", selection };
    const chosen = rule.backends[choice.index];
    const backendRewrite = chosen && "service" in chosen ? chosen.filters?.rewrite : undefined;
    const upstream = rewrittenUpstream(target.path, found.match, rewrite, backendRewrite);
    return {
      target,
      selection,
      upstreamPath: upstream.path,
      upstreamHost: upstream.host,
      plan: withCorsFields(rulePlan(rule, choice.index), corsAnswer?.response),
      mirrors: mirrorTargets(found.entry, rule.filters.mirrors, deps.random, deps.backendTls === true),
    };
  }
}

/**
 * RFC 9110 §15.5.20 on the host the request is routed by (misdirected.ts): the Host field, or an absolute-form
 * target's authority (RFC 9112 §3.2.2). A client that sent no SNI is routed by its host, never misdirected.
 */
function misdirected(
  routes: SnapshotRoutes,
  host: string,
  port: number | undefined,
  serverName: string | undefined,
  deps: Pick<RoutingDeps, "config" | "certificateOf">,
): boolean {
  if (serverName === undefined) return false;
  const sni = serverName.endsWith(".") ? serverName.slice(0, -1) : serverName;
  const grants = deps.config.clusterGrants;
  return isMisdirected({
    serverName: sni,
    host,
    port: effectivePort(routes.table.listenerPorts, port),
    pools: routes.table.listenerHostnames,
    decides: grants ? (cluster) => claimRank(grants, cluster, sni) !== undefined : () => true,
    certificateOf: deps.certificateOf,
  });
}

/**
 * The winning rule for a request on a normalised, well-formed host, or undefined (404). A wildcard pattern
 * covers only DNS labels (hosts.ts wildcardCovers).
 */
export function matchRequest(
  routes: SnapshotRoutes,
  host: string,
  request: RequestFacts,
): RouteMatchResult<ServedRoute> | undefined {
  const found = matchRoute(routes.table, host, request);
  if (!found || (found.hostname !== undefined && !wildcardCovers(found.hostname, host))) return undefined;
  return found;
}

/** The rule's plan with a CORS answer's fields after its response header modifiers (per request: they echo Origin). */
function withCorsFields(plan: RulePlan, cors: CompiledModifier | undefined): RulePlan {
  return cors ? { ...plan, responseHeaders: thenModifier(plan.responseHeaders, cors) } : plan;
}
