import type { Context, Hono } from "hono";
import type { Snapshot, SnapshotSource } from "../../store/store.js";
import { ADMIN_PREFIX } from "../core/http/request-target.js";
import type { RouterMetrics } from "../core/observability/metrics.js";
import type { Balancer } from "../core/selection/balancer.js";
import type { PassiveEjection } from "../core/selection/ejection.js";
import type { SelectFor } from "../core/selection/selector.js";
import type { TrafficHistory } from "../core/selection/traffic-history.js";
import type { SnapshotRoutes } from "../core/snapshot/served-routes.js";
import type { RoutingSteering } from "../core/steering/routing-steering.js";
import { describeRoute, explainRequest } from "./admin-routes.js";
import { explainClient, steeringView } from "./admin-steering-view.js";
import { bearerToken } from "./bearer-token.js";
import { dashboardView } from "./dashboard-data.js";
import { DASHBOARD_HTML, dashboardHeaders } from "./dashboard-page.js";
import { type MetricsEndpointDeps, metricsResponse } from "./metrics-endpoint.js";

/**
 * "all": every admin endpoint (the Node router's ADMIN_PORT listener; Workers, on its one origin, behind the
 * token). "public": the probes only, the rest of the prefix 404 (the Node router's public listener).
 */
export type AdminEndpoints = "all" | "public";

export interface AdminDeps extends MetricsEndpointDeps {
  readonly source: SnapshotSource;
  /** ADMIN_TOKEN; unset, every admin endpoint but the probes answers 404, as if it did not exist. */
  readonly adminToken: string | undefined;
  /** The snapshot's routes, as the router serves them (routing.ts routesOf). */
  readonly routesOf: (snapshot: Snapshot) => SnapshotRoutes;
  readonly select: SelectFor;
  readonly balancer: Balancer;
  readonly ejection: PassiveEjection;
  readonly metrics: RouterMetrics;
  /** Seconds since the router first saw this snapshot version. */
  readonly snapshotAgeSeconds: (snapshot: Snapshot) => number;
  /** The dashboard's ring of recent samples: sampled on a timer by the runtime, and when the dashboard asks. */
  readonly history?: TrafficHistory;
  /** "public": only the probes (livez, readyz and healthz), for kubelet and load balancers; default "all". */
  readonly endpoints?: AdminEndpoints;
  /** Cross-cluster steering (explain, dashboard); left out by callers that steer nothing. */
  readonly steering?: RoutingSteering;
}

/**
 * `/_edgeslice/livez` and `/_edgeslice/readyz` (alias `healthz`; public), `/_edgeslice/routes`,
 * `/_edgeslice/explain?host=&path=&method=` (and `header=name:value`, repeated),
 * `/_edgeslice/metrics` and `/_edgeslice/dashboard` (Bearer ADMIN_TOKEN), and `/_edgeslice/ui`, the page
 * that shows the dashboard's data (the page is public and holds no data; it exists only with ADMIN_TOKEN
 * set). The whole prefix is reserved: nothing under it is proxied. With `endpoints: "public"` only the probes
 * are served: what a load balancer's health check and kubelet need, and nothing an operator's token opens.
 */
export function registerAdmin(app: Hono, deps: AdminDeps): void {
  // Liveness: the process answers, and nothing else is asked. Not the store, not the snapshot: an outage of
  // Redis must not get a router restarted that serves, or will serve, its last records (deploy/router).
  app.get(`${ADMIN_PREFIX}/livez`, (c) => c.json({ status: "alive" }, 200, NO_STORE));

  // `readyz`, named as the sync's and Kubernetes' own; `healthz`, its name before, answers the same.
  app.get(`${ADMIN_PREFIX}/readyz`, readinessAnswer(deps));
  app.get(`${ADMIN_PREFIX}/healthz`, readinessAnswer(deps));

  if (deps.endpoints === "public") {
    app.all(`${ADMIN_PREFIX}/*`, noRoute);
    return;
  }

  app.get(`${ADMIN_PREFIX}/routes`, withToken(deps, routesAnswer));
  app.get(`${ADMIN_PREFIX}/explain`, withToken(deps, explainAnswer));
  app.get(
    `${ADMIN_PREFIX}/metrics`,
    withToken(deps, (_c, deps) => metricsResponse(deps)),
  );
  app.get(`${ADMIN_PREFIX}/dashboard`, withToken(deps, dashboardAnswer));
  app.get(`${ADMIN_PREFIX}/ui`, async (c) => {
    if (deps.adminToken === undefined) return noRoute(c);
    return c.body(DASHBOARD_HTML, 200, await dashboardHeaders());
  });
  app.all(`${ADMIN_PREFIX}/*`, noRoute);
}

/** An endpoint behind ADMIN_TOKEN: what it answers once the request presented the token. */
type TokenAnswer = (c: Context, deps: AdminDeps) => Promise<Response> | Response;

function withToken(deps: AdminDeps, answer: TokenAnswer): (c: Context) => Promise<Response> {
  return async (c) => authorise(c, deps.adminToken) ?? answer(c, deps);
}

const noRoute = (c: Context) => c.json({ error: "no_route" }, 404);

/** `/routes`: every route as served, the conflicts across clusters and what CLUSTER_GRANTS refused. */
async function routesAnswer(c: Context, deps: AdminDeps): Promise<Response> {
  const snapshot = await deps.source.current();
  if (!snapshot) return c.json({ version: null, routes: [], conflicts: [], refused: [] }, 200, NO_STORE);
  const routes = deps.routesOf(snapshot);
  return c.json(
    {
      version: snapshot.version,
      routes: routes.routes.map(describeRoute),
      conflicts: routes.conflicts,
      refused: routes.refusals,
    },
    200,
    NO_STORE,
  );
}

/** `/explain?host=&path=&method=&header=name:value&client=&continent=`: how one request would be routed. */
async function explainAnswer(c: Context, deps: AdminDeps): Promise<Response> {
  const snapshot = await deps.source.current();
  if (!snapshot) return c.json({ result: "no_endpoints", why: "no snapshot was ever loaded" }, 200, NO_STORE);
  const explained = explainRequest({
    routes: deps.routesOf(snapshot),
    rawHost: c.req.query("host") ?? "",
    path: c.req.query("path") ?? "/",
    method: c.req.query("method") ?? "GET",
    headers: explainedHeaders(c.req.queries("header") ?? []),
    select: deps.select,
    balancer: deps.balancer,
    ejection: deps.ejection,
    steering: deps.steering,
    places: deps.steering?.places() ?? deps.source.heartbeats?.(),
    client: explainClient(c.req.query("client"), c.req.query("continent")),
  });
  const expired = [...(deps.expired?.().keys() ?? [])];
  if (expired.length === 0) return c.json(explained, 200, NO_STORE);
  return c.json(
    {
      ...explained,
      expiredClusters: expired,
      expiredWhy: `stale longer than FAIL_STATIC_MAX_MS, serving nothing: ${expired.join(", ")}`,
    },
    200,
    NO_STORE,
  );
}

/** The `header=name:value` parameters of `/explain` as the request's header fields. */
function explainedHeaders(fields: readonly string[]): Headers {
  const headers = new Headers();
  for (const field of fields) {
    const colon = field.indexOf(":");
    if (colon <= 0) continue;
    try {
      headers.append(field.slice(0, colon).trim(), field.slice(colon + 1).trim());
    } catch {
      // Not a valid header name or value: no request could carry it either.
    }
  }
  return headers;
}

/** `/dashboard`: the dashboard page's data, recording a sample of the traffic history as it is asked. */
async function dashboardAnswer(c: Context, deps: AdminDeps): Promise<Response> {
  const snapshot = await deps.source.current();
  const now = Date.now();
  const services = deps.metrics.red.totals();
  deps.history?.record(now, services, deps.metrics.retries);
  const view = dashboardView({
    snapshot,
    store: deps.source.status?.(),
    ageSeconds: snapshot ? deps.snapshotAgeSeconds(snapshot) : null,
    routes: snapshot ? deps.routesOf(snapshot) : undefined,
    select: deps.select,
    ejection: deps.ejection,
    services,
    history: deps.history?.view(),
    heartbeats: deps.source.heartbeats?.(),
    expired: deps.expired?.(),
    steering: deps.steering && steeringView(deps.steering.state, deps.metrics.steering),
    now,
  });
  return c.json(view, 200, NO_STORE);
}

/** Readiness: 200 while the router holds records it can serve from, even with the store unreachable. */
function readinessAnswer(deps: AdminDeps): (c: Context) => Promise<Response> {
  return async (c) => {
    const snapshot = await deps.source.current();
    const store = deps.source.status?.();
    if (!snapshot) return c.json({ status: "no_snapshot", store }, 503, NO_STORE);
    const beats = deps.source.heartbeats?.();
    const clusters = snapshot.clusters.map((cluster) => {
      // The sync says in each beat how many Service records it holds; fewer here: the store lost some.
      const held = cluster.stale ? undefined : beats?.get(cluster.name)?.services;
      const missing = held === undefined ? 0 : Math.max(0, held - cluster.servicesV2.size);
      return {
        name: cluster.name,
        stale: cluster.stale,
        services: cluster.servicesV2.size,
        routes: cluster.routes.size,
        ...(missing > 0 ? { missingServices: missing } : {}),
      };
    });
    const lacking = clusters.some((cluster) => cluster.missingServices !== undefined);
    // Serving the last known records while the store is unreachable is still serving (fail static): 200.
    return c.json(
      {
        status: store?.connected === false || lacking ? "degraded" : "ok",
        store,
        version: snapshot.version,
        ageSeconds: deps.snapshotAgeSeconds(snapshot),
        clusters,
      },
      200,
      NO_STORE,
    );
  };
}

const NO_STORE = { "cache-control": "no-store" };

function authorise(c: Context, token: string | undefined): Response | undefined {
  if (token === undefined) return noRoute(c);
  const presented = bearerToken(c.req.header("authorization"));
  if (presented !== undefined && constantTimeEqual(presented, token)) return undefined;
  return c.json({ error: "unauthorized" }, 401, { "www-authenticate": 'Bearer realm="edgeslice"' });
}

/**
 * Compares every character of the expected token whatever the input, so the time taken does not tell an
 * attacker how long a matching prefix was (runs the same on Node and Workers, no node:crypto needed).
 */
export function constantTimeEqual(presented: string, expected: string): boolean {
  let difference = presented.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) {
    const p = presented.length === 0 ? 0 : presented.charCodeAt(i % presented.length);
    difference |= p ^ expected.charCodeAt(i);
  }
  return difference === 0;
}
