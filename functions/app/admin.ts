import type { Context, Hono } from "hono";
import { PROMETHEUS_CONTENT_TYPE } from "../../lib/prometheus.js";
import type { Snapshot, SnapshotSource } from "../../store/store.js";
import { backendStates } from "../core/backend-states.js";
import type { Balancer } from "../core/balancer.js";
import type { PassiveEjection } from "../core/ejection.js";
import type { RouterMetrics } from "../core/metrics.js";
import { lookupRoute, normaliseHost, type RouteEntry, routeIndexOf } from "../core/route-index.js";
import { ADMIN_PREFIX, wildcardCovers } from "../core/routing.js";
import type { Selection } from "../core/select.js";
import { dashboardView } from "./dashboard-data.js";
import { DASHBOARD_HTML, dashboardHeaders } from "./dashboard-page.js";

export interface AdminDeps {
  readonly source: SnapshotSource;
  /** ADMIN_TOKEN; when unset, every admin endpoint but healthz answers 404, as if it did not exist. */
  readonly adminToken: string | undefined;
  readonly select: (route: RouteEntry) => Selection;
  readonly balancer: Balancer;
  readonly ejection: PassiveEjection;
  readonly metrics: RouterMetrics;
  /** Seconds since the router first saw this snapshot version. */
  readonly snapshotAgeSeconds: (snapshot: Snapshot) => number;
}

/**
 * `/_edgeslice/healthz` (public), `/_edgeslice/routes`, `/_edgeslice/explain?host=&path=`,
 * `/_edgeslice/metrics` and `/_edgeslice/dashboard` (Bearer ADMIN_TOKEN), and `/_edgeslice/ui`, the page
 * that shows the dashboard's data (the page is public and holds no data; it exists only with ADMIN_TOKEN
 * set). The whole prefix is reserved: nothing under it is proxied.
 */
export function registerAdmin(app: Hono, deps: AdminDeps): void {
  app.get(`${ADMIN_PREFIX}/healthz`, async (c) => {
    const snapshot = await deps.source.current();
    const store = deps.source.status?.();
    if (!snapshot) return c.json({ status: "no_snapshot", store }, 503, NO_STORE);
    // Serving the last known records while the store is unreachable is still serving (fail static): 200.
    return c.json(
      {
        status: store?.connected === false ? "degraded" : "ok",
        store,
        version: snapshot.version,
        ageSeconds: deps.snapshotAgeSeconds(snapshot),
        clusters: snapshot.clusters.map((cluster) => ({
          name: cluster.name,
          stale: cluster.stale,
          services: cluster.services.size,
        })),
      },
      200,
      NO_STORE,
    );
  });

  app.get(`${ADMIN_PREFIX}/routes`, async (c) => {
    const denied = authorise(c, deps.adminToken);
    if (denied) return denied;
    const snapshot = await deps.source.current();
    if (!snapshot) return c.json({ version: null, routes: [] }, 200, NO_STORE);
    const routes = [];
    for (const entries of routeIndexOf(snapshot).byHost.values()) {
      for (const route of entries) routes.push(describeRoute(route));
    }
    return c.json({ version: snapshot.version, routes }, 200, NO_STORE);
  });

  app.get(`${ADMIN_PREFIX}/explain`, async (c) => {
    const denied = authorise(c, deps.adminToken);
    if (denied) return denied;
    const rawHost = c.req.query("host") ?? "";
    const path = c.req.query("path") ?? "/";
    const snapshot = await deps.source.current();
    if (!snapshot)
      return c.json({ result: "no_endpoints", why: "no snapshot was ever loaded" }, 200, NO_STORE);
    const host = normaliseHost(rawHost);
    const found = host === undefined ? undefined : lookupRoute(routeIndexOf(snapshot), host, path);
    const route = found && host !== undefined && wildcardCovers(found.host, host) ? found : undefined;
    if (!route) {
      return c.json(
        { host: host ?? rawHost, path, result: "no_route", why: "no published route matches" },
        200,
      );
    }
    const selection = deps.select(route);
    const excluded = deps.ejection.excluded(selection.addresses);
    const usable = selection.addresses.filter((address) => !excluded.has(address)).length;
    return c.json(
      {
        host,
        path,
        result: usable > 0 ? "proxy" : "no_endpoints",
        route: describeRoute(route),
        clusters: selection.clusters,
        droppedStale: route.failStatic ? [] : route.candidates.filter((c) => c.stale).map((c) => c.cluster),
        zoneHints: selection.zoneHints,
        tiers: selection.tiers.map((tier) => ({
          name: tier.name,
          backends: tier.backends.map((backend) => ({
            address: backend.address,
            cluster: backend.cluster,
            inFlight: deps.balancer.inFlight(backend.address),
            ejected: deps.ejection.isEjected(backend.address),
            skipped: excluded.has(backend.address),
          })),
        })),
        why: explainWhy(route, selection, usable),
      },
      200,
      NO_STORE,
    );
  });

  app.get(`${ADMIN_PREFIX}/metrics`, async (c) => {
    const denied = authorise(c, deps.adminToken);
    if (denied) return denied;
    const snapshot = await deps.source.current();
    const isEjected = (address: string) => deps.ejection.isEjected(address);
    const text = deps.metrics.render({
      backends: backendStates(snapshot, isEjected),
      clusters: snapshot?.clusters ?? [],
      inFlight: deps.balancer.totalInFlight(),
      ejected: deps.ejection.ejectedCount(),
      snapshot: {
        loaded: snapshot !== undefined,
        version: snapshot?.version ?? 0,
        ageSeconds: snapshot ? deps.snapshotAgeSeconds(snapshot) : 0,
        clusters: snapshot?.clusters.length ?? 0,
        staleClusters: snapshot?.clusters.filter((cluster) => cluster.stale).length ?? 0,
        storeConnected: deps.source.status?.().connected,
      },
    });
    return c.body(text, 200, { "content-type": PROMETHEUS_CONTENT_TYPE, ...NO_STORE });
  });

  app.get(`${ADMIN_PREFIX}/dashboard`, async (c) => {
    const denied = authorise(c, deps.adminToken);
    if (denied) return denied;
    const snapshot = await deps.source.current();
    const view = dashboardView({
      snapshot,
      store: deps.source.status?.(),
      ageSeconds: snapshot ? deps.snapshotAgeSeconds(snapshot) : null,
      select: deps.select,
      ejection: deps.ejection,
      services: deps.metrics.red.totals(),
    });
    return c.json(view, 200, NO_STORE);
  });

  app.get(`${ADMIN_PREFIX}/ui`, async (c) => {
    if (deps.adminToken === undefined) return c.json({ error: "no_route" }, 404);
    return c.body(DASHBOARD_HTML, 200, await dashboardHeaders());
  });

  app.all(`${ADMIN_PREFIX}/*`, (c) => c.json({ error: "no_route" }, 404));
}

const NO_STORE = { "cache-control": "no-store" };

function authorise(c: Context, token: string | undefined): Response | undefined {
  if (token === undefined) return c.json({ error: "no_route" }, 404);
  const header = c.req.header("authorization") ?? "";
  const presented = header.startsWith("Bearer ") ? header.slice(7).trim() : "";
  if (presented !== "" && constantTimeEqual(presented, token)) return undefined;
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

function describeRoute(route: RouteEntry) {
  return {
    host: route.host,
    pathPrefix: route.pathPrefix,
    failStatic: route.failStatic,
    clusters: route.candidates.map((candidate) => ({
      cluster: candidate.cluster,
      service: candidate.record.service,
      port: candidate.record.port,
      stale: candidate.stale,
      ipv4: { endpoints: candidate.record.ipv4.endpoints.length, fallback: candidate.record.ipv4.fallback },
      ipv6: { endpoints: candidate.record.ipv6.endpoints.length, fallback: candidate.record.ipv6.fallback },
    })),
    shadowed: route.shadowed,
  };
}

function explainWhy(route: RouteEntry, selection: Selection, usable: number): string[] {
  const why: string[] = [];
  const stale = route.candidates.filter((c) => c.stale).map((c) => c.cluster);
  if (route.failStatic) why.push(`every cluster is stale (${stale.join(", ")}): serving last known backends`);
  else if (stale.length > 0) why.push(`dropped stale clusters: ${stale.join(", ")}`);
  for (const choice of selection.clusters) {
    why.push(
      `${choice.cluster}: ${choice.family ?? "no family"} (${choice.reason})${choice.local ? ", local" : ""}`,
    );
  }
  why.push(`zone hints: ${selection.zoneHints}`);
  if (selection.addresses.length === 0) why.push("no endpoints: 503");
  else if (usable < selection.addresses.length) {
    why.push(`${selection.addresses.length - usable} of ${selection.addresses.length} backends ejected`);
  }
  return why;
}
