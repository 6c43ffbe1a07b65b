import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app/app.js";
import type { DashboardView } from "../../../functions/app/dashboard-data.js";
import { createRouting } from "../../../functions/core/routing.js";
import { createFetchUpstream } from "../../../functions/transports/fetch.js";
import { silentLogger } from "../../../lib/logger.js";
import { MemoryStore } from "../../../store/memory-store.js";
import type { ServiceRecord } from "../../../store/records.js";
import { ep, serviceRecord } from "../fixtures.js";
import { testConfig } from "../harness.js";

/** east serves demo/web over IPv4 (one pod draining), west is stale and lists it over IPv6. */
async function loadedStore(): Promise<MemoryStore> {
  const store = new MemoryStore();
  const east = serviceRecord({
    cluster: "east",
    service: "demo/web",
    hosts: ["web.localhost"],
    ipv4: [ep("127.0.0.1"), ep("127.0.0.2")],
  });
  const draining: ServiceRecord = { ...east, ipv4: { ...east.ipv4, draining: [ep("127.0.0.9")] } };
  await store.writer("east").put(draining);
  await store.writer("east").heartbeat({
    holder: "t",
    leaseMs: 60_000,
    at: Date.now() - 4_000,
    apiserverUnreachableSince: Date.now() - 90_000,
  });
  await store.writer("west").put(
    serviceRecord({
      cluster: "west",
      service: "demo/web",
      hosts: ["web.localhost"],
      ipv6: [ep("::1")],
    }),
  );
  return store;
}

/** `null`: ADMIN_TOKEN unset. */
async function appWith(adminToken: string | null = "secret-token") {
  const deps = {
    source: await loadedStore(),
    upstream: createFetchUpstream(fetch),
    config: { ...testConfig, adminToken: adminToken ?? undefined, cluster: "east" },
    now: Date.now,
    random: Math.random,
    balancing: "p2c" as const,
    logger: silentLogger,
  };
  const routing = createRouting(deps);
  return { app: createApp(deps, routing), routing };
}

const auth = { authorization: "Bearer secret-token" };

describe("GET /_edgeslice/dashboard", () => {
  it("needs the bearer token, and answers 404 when ADMIN_TOKEN is unset", async () => {
    const { app } = await appWith();
    const missing = await app.request("http://router/_edgeslice/dashboard");
    const wrong = await app.request("http://router/_edgeslice/dashboard", {
      headers: { authorization: "Bearer x" },
    });
    const off = await (await appWith(null)).app.request("http://router/_edgeslice/dashboard", {
      headers: auth,
    });
    expect([missing.status, wrong.status, off.status]).toEqual([401, 401, 404]);
  });

  it("shows clusters, routes with endpoints per family and state, and the family in use", async () => {
    const { app, routing } = await appWith();
    routing.policy.ejection.recordFailure("127.0.0.2:8080");
    routing.policy.ejection.recordFailure("127.0.0.2:8080");
    routing.policy.ejection.recordFailure("127.0.0.2:8080");
    const res = await app.request("http://router/_edgeslice/dashboard", { headers: auth });
    expect(res.headers.get("cache-control")).toBe("no-store");
    const view = (await res.json()) as DashboardView;
    expect(view.version).toBeGreaterThan(0);
    expect(view.clusters).toEqual([
      {
        name: "east",
        stale: false,
        expired: false,
        services: 1,
        heartbeatAgeSeconds: expect.closeTo(4, 0),
        apiserver: "unreachable",
        apiserverUnreachableSeconds: expect.closeTo(90, 0),
      },
      {
        name: "west",
        stale: true,
        expired: false,
        services: 1,
        heartbeatAgeSeconds: null,
        apiserver: "unknown",
        apiserverUnreachableSeconds: null,
      },
    ]);
    expect(view.routes).toEqual([
      {
        route: "annotation:demo/web",
        hosts: ["web.localhost"],
        paths: ["/"],
        rules: [{ matches: ["/"], backends: [{ service: "demo/web", port: 80, weight: 1 }] }],
        failStatic: false,
        clusters: [
          {
            cluster: "east",
            service: "demo/web",
            port: 80,
            stale: false,
            uses: "ipv4",
            families: {
              ipv4: { ready: 1, fallback: 0, draining: 1, ejected: 1 },
              ipv6: { ready: 0, fallback: 0, draining: 0, ejected: 0 },
            },
            // Out of rotation first: what an operator looks for.
            pods: [
              { address: "127.0.0.2:8080", family: "ipv4", state: "ejected" },
              { address: "127.0.0.9:8080", family: "ipv4", state: "draining" },
              { address: "127.0.0.1:8080", family: "ipv4", state: "ready" },
            ],
            morePods: 0,
          },
          {
            cluster: "west",
            service: "demo/web",
            port: 80,
            stale: true,
            uses: null,
            families: {
              ipv4: { ready: 0, fallback: 0, draining: 0, ejected: 0 },
              ipv6: { ready: 1, fallback: 0, draining: 0, ejected: 0 },
            },
            pods: [{ address: "[::1]:8080", family: "ipv6", state: "ready" }],
            morePods: 0,
          },
        ],
      },
    ]);
    // The memory store reads its heartbeats, so the page has nothing to excuse.
    expect(view.notes).toEqual([]);
  });

  it("carries the cumulative responses, 4xx and 5xx per service and cluster the page computes rates from", async () => {
    const { app, routing } = await appWith();
    const { metrics } = routing.policy;
    metrics.respond(metrics.red.unrouted, "GET", 404, 0.001);
    metrics.respond(metrics.red.series("demo/web", "east", "ipv4"), "GET", 502, 0.01);
    const view = (await (
      await app.request("http://router/_edgeslice/dashboard", { headers: auth })
    ).json()) as DashboardView;
    expect(view.services.map(({ durations, ...counts }) => counts)).toEqual([
      { service: "", cluster: "", requests: 1, clientErrors: 1, errors: 0 },
      { service: "demo/web", cluster: "east", requests: 1, clientErrors: 0, errors: 1 },
    ]);
    // One sample so far: the history has its interval and no point yet.
    expect(view.history).toMatchObject({ intervalMs: 5_000, services: [], clusters: [], retries: [] });
  });

  it("says unknown, never reachable, for the API server of a stale cluster whose last heartbeat said reachable", async () => {
    let clock = Date.now();
    const store = new MemoryStore(() => clock);
    const west = store.writer("west");
    await west.put(serviceRecord({ cluster: "west", service: "demo/web", hosts: ["web.localhost"] }));
    await west.heartbeat({ holder: "t", leaseMs: 1_000, at: clock });
    clock += 120_000;
    const deps = {
      source: store,
      upstream: createFetchUpstream(fetch),
      config: { ...testConfig, adminToken: "secret-token" },
      now: Date.now,
      random: Math.random,
      balancing: "p2c" as const,
      logger: silentLogger,
    };
    const view = (await (
      await createApp(deps).request("http://router/_edgeslice/dashboard", { headers: auth })
    ).json()) as DashboardView;
    expect(view.clusters.find((cluster) => cluster.name === "west")).toMatchObject({
      stale: true,
      // It has a heartbeat record: the one it wrote before it went quiet.
      heartbeatAgeSeconds: expect.any(Number),
      apiserver: "unknown",
    });
  });
});

describe("GET /_edgeslice/ui", () => {
  it("serves the page without a token: it holds no data, only the form that asks for one", async () => {
    const res = await (await appWith()).app.request("http://router/_edgeslice/ui");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    expect(html).toContain('<form id="login"');
    expect(html).not.toContain("web.localhost");
  });

  it("does not exist when ADMIN_TOKEN is unset", async () => {
    expect((await (await appWith(null)).app.request("http://router/_edgeslice/ui")).status).toBe(404);
  });

  it("names no external asset and allows exactly its inline script and style by hash", async () => {
    const res = await (await appWith()).app.request("http://router/_edgeslice/ui");
    const html = await res.text();
    const csp = res.headers.get("content-security-policy") ?? "";
    const inline = (tag: string) => {
      const found = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(html)?.[1] ?? "";
      return createHash("sha256").update(found).digest("base64");
    };
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`script-src 'sha256-${inline("script")}'`);
    expect(csp).toContain(`style-src 'sha256-${inline("style")}'`);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(html.match(/<script/g)).toHaveLength(1);
    // HTML parsers turn a NUL into U+FFFD, and the hash would no longer match what the browser runs.
    expect(html).not.toContain("\u0000");
    expect(html).not.toMatch(/\b(?:src|href)="(?!data:)/);
    // The SVG namespace is a name the charts create elements in, never fetched.
    expect(html.replaceAll("http://www.w3.org/2000/svg", "")).not.toMatch(/https?:\/\//);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

describe("GET /_edgeslice/metrics", () => {
  it("renders backends by state and cluster staleness from the snapshot and the ejection state", async () => {
    const { app } = await appWith();
    const text = await (await app.request("http://router/_edgeslice/metrics", { headers: auth })).text();
    expect(text).toContain(
      'edgeslice_backends{service="demo/web",cluster="east",family="ipv4",state="ready"} 2',
    );
    expect(text).toContain(
      'edgeslice_backends{service="demo/web",cluster="east",family="ipv4",state="draining"} 1',
    );
    expect(text).toContain(
      'edgeslice_backends{service="demo/web",cluster="west",family="ipv6",state="ready"} 1',
    );
    expect(text).toContain('edgeslice_cluster_stale{cluster="west"} 1');
    expect(text).toContain("# TYPE edgeslice_request_duration_seconds histogram");
  });
});
