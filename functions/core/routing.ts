import { authorityPort } from "../../lib/authority.js";
import type { Logger } from "../../lib/logger.js";
import type { Snapshot, SnapshotSource } from "../../store/store.js";
import type { PolicyDeps } from "./forwarding/proxy-policy.js";
import { type Forwarded, filtersAnswer, forwardedBy } from "./forwarding/rule-filters.js";
import { wildcardCovers } from "./http/hosts.js";
import { type CheckedTarget, checkedTarget, type RequestTarget } from "./http/request-target.js";
import { RouterMetrics } from "./observability/metrics.js";
import { effectivePort } from "./routes/listener-ports.js";
import { mirrorTargets } from "./routes/mirrors.js";
import type { RequestFacts } from "./routes/request-match.js";
import { matchRoute, type RouteMatchResult } from "./routes/route-table.js";
import { chooseBackend } from "./routes/weights.js";
import type { RoutingOutcome, RoutingRequest } from "./routing-outcome.js";
import { Balancer, type BalancingMode } from "./selection/balancer.js";
import { type EjectionOptions, PassiveEjection } from "./selection/ejection.js";
import { createSelector, type SelectFor } from "./selection/selector.js";
import type { RouterConfig } from "./settings/config.js";
import { policySettings } from "./settings/routing-defaults.js";
import type { ServedRoute, SnapshotRoutes } from "./snapshot/served-routes.js";
import { RouteReports } from "./snapshot/snapshot-reports.js";
import {
  createRoutingSteering,
  type RoutingSteering,
  type RoutingSteeringDeps,
} from "./steering/routing-steering.js";
import { isMisdirected } from "./tls/misdirected.js";
import { claimRank } from "./trust/cluster-grants.js";
import { DEFAULT_FAIL_STATIC_MAX_MS, FailStaticBound } from "./trust/fail-static-bound.js";

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

export type {
  Preflighted,
  Redirected,
  Routed,
  RoutingOutcome,
  RoutingRequest,
  Unserved,
} from "./routing-outcome.js";

export function createRouting(deps: RoutingDeps): Routing {
  return new RoutingCore(deps);
}

/** The routing core: the store's view (fail-static bound), the policy shared by transports, and the routing. */
class RoutingCore implements Routing {
  readonly source: FailStaticBound;
  readonly policy: PolicyDeps;
  readonly select: SelectFor;
  readonly steering: RoutingSteering;
  readonly #deps: RoutingDeps;
  readonly #reports: RouteReports;
  /** When this router first saw the snapshot's version: read on every request, so no clock read unless new. */
  #seen = { version: -1, at: 0 };

  constructor(deps: RoutingDeps) {
    const { config } = deps;
    this.#deps = deps;
    this.source = new FailStaticBound(deps.source, {
      maxStaleMs: config.failStaticMaxMs ?? DEFAULT_FAIL_STATIC_MAX_MS,
      now: deps.now,
      logger: deps.logger,
    });
    const metrics = new RouterMetrics();
    this.steering = createRoutingSteering(deps, metrics.steering);
    const { ipFamily, cluster, zone } = config;
    this.select = createSelector({
      ipFamily,
      cluster,
      zone,
      steering: this.steering.planning,
      backendTls: deps.backendTls === true,
    });
    this.policy = {
      balancer: new Balancer(deps.balancing, deps.random),
      ejection: new PassiveEjection(deps.now, deps.ejection),
      metrics,
      logger: deps.logger,
      settings: policySettings(config),
    };
    this.#reports = new RouteReports(deps.logger, metrics, config.clusterGrants, config.gateways);
  }

  // These two are handed on unbound (app/app.ts).
  readonly routesOf = (snapshot: Snapshot): SnapshotRoutes => this.#reports.routesOf(snapshot);

  readonly snapshotAgeSeconds = (snapshot: Snapshot): number => {
    this.#noteSeen(snapshot);
    return Math.max(0, (this.#deps.now() - this.#seen.at) / 1000);
  };

  async route(url: string, request: RoutingRequest): Promise<RoutingOutcome> {
    return this.routeNow(url, request);
  }

  routeNow(url: string, request: RoutingRequest): RoutingOutcome | Promise<RoutingOutcome> {
    const checked = checkedTarget(url);
    if (typeof checked === "string") return checked;
    const current = this.source.current();
    return current instanceof Promise
      ? current.then((snapshot) => this.#routeTarget(snapshot, checked, request))
      : this.#routeTarget(current, checked, request);
  }

  #noteSeen(snapshot: Snapshot): void {
    if (snapshot.version !== this.#seen.version)
      this.#seen = { version: snapshot.version, at: this.#deps.now() };
  }

  /** The rule the request matches in the snapshot, and what it makes of the request. */
  #routeTarget(
    snapshot: Snapshot | undefined,
    checked: CheckedTarget,
    request: RoutingRequest,
  ): RoutingOutcome {
    // Nothing loaded yet (the Node router listens before its first load), or Redis down with nothing ever
    // loaded: no backend is known (docs/design.md "Router", rule 4).
    if (!snapshot) return "no_snapshot";
    this.#noteSeen(snapshot);
    const routes = this.routesOf(snapshot);
    const { target, host } = checked;
    const port = authorityPort(target.authority) ?? request.listenerPort;
    if (misdirected(routes, host, port, request.serverName, this.#deps)) return "misdirected_request";
    const found = matchRequest(routes, host, {
      path: target.path,
      method: request.method,
      headers: request.headers,
      port,
      serverName: request.serverName,
    });
    if (!found) return "no_route";
    const answer = filtersAnswer(found.rule, request, target, host, found.match);
    return "corsFields" in answer ? this.#forwarded(found, target, request, answer) : answer;
  }

  /** The backend the matched rule sends the request to (weights, steering), and how it goes there. */
  #forwarded(
    found: RouteMatchResult<ServedRoute>,
    target: RequestTarget,
    request: RoutingRequest,
    filters: Forwarded,
  ): RoutingOutcome {
    const { rule } = found;
    const { random, backendTls } = this.#deps;
    const choice = chooseBackend(rule.backends, random);
    if (choice.kind !== "service") return "invalid_backend";
    const selection = this.steering.steer(
      this.select(found.entry, found.ruleIndex, choice.index),
      request.client,
    );
    if (selection.backendTlsRefused) return "backend_tls_unsupported";
    if (selection.unresolved) return "invalid_backend";
    if (selection.addresses.length === 0) return { error: "no_endpoints", selection };
    const mirrors = mirrorTargets(found.entry, rule.filters.mirrors, random, backendTls === true);
    return forwardedBy(rule, choice.index, target, found.match, filters, selection, mirrors);
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
