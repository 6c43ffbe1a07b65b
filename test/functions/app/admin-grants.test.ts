import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app/app.js";
import type { DashboardView } from "../../../functions/app/dashboard-data.js";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { recordingLogger } from "../../support/loggers.js";
import { snapshotOf } from "../fixtures.js";
import { testConfig } from "../harness.js";

/**
 * What an operator sees of CLUSTER_GRANTS: each refusal logged once while it lasts and counted, explain
 * naming the refusals that bear on a request, /routes and the dashboard listing them. "evil" publishes a
 * route for pay.test (granted to "pay") and lists pay's pod address among its own endpoints.
 */
const CLUSTER_GRANTS =
  "pay=hosts:pay.test networks:127.0.0.1/32; evil=hosts:*.evil.test networks:127.0.0.2/32";
const to = (service: string) => ({ service, port: 80, weight: 1 });
const exactLogin = { matches: [{ path: { type: "Exact" as const, value: "/login" }, headers: [] }] };

/** A new snapshot object on every read, as a source publishes after each change: refusals are rebuilt each time. */
const snapshot = () =>
  snapshotOf([
    {
      name: "pay",
      services: [
        serviceRecordV2({
          cluster: "pay",
          service: "pay/web",
          ports: [{ number: 80, ipv4: [endpoint("127.0.0.1", 18080)] }],
        }),
      ],
      routes: [
        routeRecord("httproute:pay/web", {
          hostnames: ["pay.test"],
          createdAt: 5_000,
          rules: [routeRule([to("pay/web")])],
        }),
      ],
    },
    {
      name: "evil",
      services: [
        serviceRecordV2({
          cluster: "evil",
          service: "evil/web",
          ports: [{ number: 80, ipv4: [endpoint("127.0.0.2", 18081), endpoint("127.0.0.1", 18080)] }],
        }),
      ],
      routes: [
        routeRecord("httproute:evil/login", {
          hostnames: ["pay.test"],
          createdAt: 1,
          rules: [routeRule([to("evil/web")], exactLogin)],
        }),
        routeRecord("httproute:evil/web", {
          hostnames: ["a.evil.test"],
          rules: [routeRule([to("evil/web")])],
        }),
      ],
    },
  ]);

function grantedApp() {
  const { logger, entries } = recordingLogger();
  const app = createApp({
    source: { current: snapshot },
    upstream: createFetchUpstream(fetch),
    config: { ...testConfig, clusterGrants: parseRouterConfig({ CLUSTER_GRANTS }).clusterGrants },
    now: Date.now,
    random: Math.random,
    balancing: "p2c",
    logger,
  });
  const admin = async (path: string) => {
    const res = await app.request(`http://router/_edgeslice/${path}`, {
      headers: { authorization: "Bearer secret-token" },
    });
    return path === "metrics" ? res.text() : res.json();
  };
  return { admin, entries };
}

describe("CLUSTER_GRANTS as the admin endpoints show it", () => {
  it("logs each refusal once while it lasts, and counts it in edgeslice_grant_refusals_total", async () => {
    const { admin, entries } = grantedApp();
    for (let i = 0; i < 3; i++) await admin("explain?host=pay.test&path=/login");
    const refusals = entries.filter((entry) => entry.message.includes("CLUSTER_GRANTS"));
    expect(refusals.map((entry) => entry.fields)).toEqual([
      { cluster: "evil", service: "evil/web", addresses: ["127.0.0.1:18080"], count: 1 },
      { cluster: "evil", route: "httproute:evil/login", hosts: ["pay.test"] },
    ]);
    const metrics = await admin("metrics");
    expect(metrics).toContain('edgeslice_grant_refusals_total{cluster="evil",kind="endpoints"} 1');
    expect(metrics).toContain('edgeslice_grant_refusals_total{cluster="evil",kind="route"} 1');
  });

  it("explains that the victim's host goes to the victim, and names the attacker's refused route", async () => {
    const { admin } = grantedApp();
    const body = (await admin("explain?host=pay.test&path=/login")) as { why: string[] };
    expect(body).toMatchObject({
      result: "proxy",
      route: { id: "httproute:pay/web" },
      tiers: [{ backends: [{ address: "127.0.0.1:18080", cluster: "pay" }] }],
      refused: [
        { cluster: "evil", kind: "route", id: "httproute:evil/login", refused: ["pay.test"], count: 1 },
      ],
    });
    expect(body.why).toContain(
      "CLUSTER_GRANTS refused evil's route httproute:evil/login: evil is not granted pay.test",
    );
  });

  it("explains the endpoints left out of the attacker's own route", async () => {
    const { admin } = grantedApp();
    const body = await admin("explain?host=a.evil.test&path=/");
    expect(body).toMatchObject({
      result: "proxy",
      tiers: [{ backends: [{ address: "127.0.0.2:18081", cluster: "evil" }] }],
      refused: [{ cluster: "evil", kind: "endpoints", id: "evil/web", refused: ["127.0.0.1:18080"] }],
    });
  });

  it("lists the refusals in /routes and on the dashboard, whose endpoint counts leave them out", async () => {
    const { admin } = grantedApp();
    const routes = (await admin("routes")) as { routes: { id: string }[]; refused: unknown[] };
    expect(routes.routes.map((route) => route.id)).toEqual(["httproute:evil/web", "httproute:pay/web"]);
    expect(routes.refused).toHaveLength(2);
    const dashboard = (await admin("dashboard")) as DashboardView;
    expect(dashboard.refused.map((refusal) => `${refusal.cluster} ${refusal.kind} ${refusal.id}`)).toEqual([
      "evil endpoints evil/web",
      "evil route httproute:evil/login",
    ]);
    const evilRoute = dashboard.routes.find((route) => route.route === "httproute:evil/web");
    expect(evilRoute?.clusters.map((cluster) => cluster.families.ipv4.ready)).toEqual([1]);
  });
});
