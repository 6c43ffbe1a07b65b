import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app/app.js";
import type { DashboardView } from "../../../functions/app/dashboard-data.js";
import { createRouting } from "../../../functions/core/routing.js";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import { silentLogger } from "../../../lib/logger.js";
import { heartbeatsOf, PLACES, steeredSnapshot } from "../core/steering/steering-fixtures.js";
import { testConfig } from "../harness.js";

const AUTH = { authorization: `Bearer ${testConfig.adminToken}` };

function steeredApp(policy: "proximity" | "weighted") {
  const snapshot = steeredSnapshot(
    policy === "weighted"
      ? {
          fra: {
            policy,
            weights: [
              { cluster: "fra", weight: 80 },
              { cluster: "iad", weight: 20 },
            ],
          },
          iad: {
            policy,
            weights: [
              { cluster: "fra", weight: 80 },
              { cluster: "iad", weight: 20 },
            ],
          },
          pdx: {
            policy,
            weights: [
              { cluster: "fra", weight: 80 },
              { cluster: "iad", weight: 20 },
            ],
          },
        }
      : { fra: { policy }, iad: { policy }, pdx: { policy } },
  );
  const heartbeats = heartbeatsOf(PLACES);
  const deps = {
    source: { current: () => snapshot, heartbeats: () => heartbeats },
    config: { ...testConfig, routerLocation: { lat: 50, long: 8.5 } },
    now: Date.now,
    random: () => 0.5,
    balancing: "p2c" as const,
    logger: silentLogger,
    upstream: createFetchUpstream(fetch),
  };
  const routing = createRouting(deps);
  return { app: createApp(deps, routing), routing };
}

describe("explain and the dashboard for a steered Service", () => {
  it("explains each cluster's place, distance, EWMA and health, and why the first one wins", async () => {
    const { app } = steeredApp("proximity");
    const response = await app.request("/_edgeslice/explain?host=shop.test&path=/", { headers: AUTH });
    const body = (await response.json()) as {
      steering: {
        policy: string;
        chosen: string;
        reason: string;
        order: string[];
        origin: unknown;
        clusters: unknown[];
      };
      why: string[];
    };
    expect(body.steering).toMatchObject({
      policy: "proximity",
      chosen: "fra",
      reason: "nearest",
      order: ["fra", "iad", "pdx"],
      origin: { from: "router", lat: 50, long: 8.5 },
    });
    expect(body.steering.clusters[0]).toMatchObject({
      cluster: "fra",
      region: "eu-central",
      state: "healthy",
      ewmaMs: null,
      share: 1,
    });
    expect(
      body.why.some((line) =>
        line.startsWith(
          "steering proximity (the Service's edgeslice.io/cluster-steering): fra first (nearest)",
        ),
      ),
    ).toBe(true);
  });

  it("explains from the client's place given as client=lat,long", async () => {
    const { app } = steeredApp("proximity");
    const response = await app.request("/_edgeslice/explain?host=shop.test&path=/&client=45.5,-122.7", {
      headers: AUTH,
    });
    const body = (await response.json()) as { steering: { chosen: string; origin: { from: string } } };
    expect(body.steering).toMatchObject({ chosen: "pdx", origin: { from: "client" } });
  });

  it("gives each weighted cluster its share", async () => {
    const { app } = steeredApp("weighted");
    const response = await app.request("/_edgeslice/explain?host=shop.test&path=/", { headers: AUTH });
    const body = (await response.json()) as { steering: { clusters: { cluster: string; share: number }[] } };
    expect(body.steering.clusters.map((c) => [c.cluster, c.share])).toEqual([
      ["fra", 0.8],
      ["iad", 0.2],
      ["pdx", 0],
    ]);
  });

  it("lists the decisions per Service and cluster on the dashboard, and each cluster's health", async () => {
    const { app, routing } = steeredApp("proximity");
    for (let i = 0; i < 3; i++)
      await routing.route("http://shop.test/", { method: "GET", headers: new Headers() });
    await routing.route("http://shop.test/", {
      method: "GET",
      headers: new Headers(),
      client: { point: { lat: 45.5, long: -122.7 } },
    });
    const view = (await (
      await app.request("/_edgeslice/dashboard", { headers: AUTH })
    ).json()) as DashboardView;
    expect(view.steering?.decisions).toEqual([
      { service: "shop/web", policy: "proximity", cluster: "fra", reason: "nearest", count: 3 },
      { service: "shop/web", policy: "proximity", cluster: "pdx", reason: "nearest", count: 1 },
    ]);
    expect(view.steering?.clusters.map((c) => [c.name, c.state])).toEqual([
      ["fra", "healthy"],
      ["iad", "healthy"],
      ["pdx", "healthy"],
    ]);
  });

  it("exposes the decisions and each cluster's state as metrics", async () => {
    const { app, routing } = steeredApp("proximity");
    await routing.route("http://shop.test/", { method: "GET", headers: new Headers() });
    const text = await (await app.request("/_edgeslice/metrics", { headers: AUTH })).text();
    expect(text).toContain(
      'edgeslice_steering_decisions_total{service="shop/web",policy="proximity",cluster="fra",reason="nearest"} 1',
    );
    expect(text).toContain('edgeslice_cluster_stepped_over{cluster="fra"} 0');
  });
});
