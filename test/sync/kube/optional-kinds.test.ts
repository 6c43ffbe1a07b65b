import { describe, expect, it } from "vitest";
import { sleep } from "../../../lib/async.js";
import { eventually } from "../../support/eventually.js";
import { clusterWatches, type Harness } from "./cluster-watch-kit.js";

const GATEWAY_CLASS = {
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "GatewayClass",
  metadata: { name: "edgeslice" },
  spec: { controllerName: "edgeslice.io/gateway-controller" },
} as const;

const classes = (h: Harness) => h.watch.routeObjects?.().gatewayClasses.length ?? 0;
const logged = (h: Harness, message: string) => h.logs.filter((entry) => entry.message.startsWith(message));

describe("optional kinds (the Gateway API's CRDs) through API server restarts", () => {
  const { setUp } = clusterWatches();

  it("keeps a served kind's objects through 404s shorter than the grace, as a restarting API server answers before its CRDs are served", async () => {
    const counts: number[] = [];
    let h: Harness | undefined;
    h = await setUp((kube) => kube.apply(GATEWAY_CLASS), {
      routeKinds: true,
      forbiddenReportMs: 5_000,
      onRoutesChanged: () => {
        if (h) counts.push(classes(h));
      },
    });
    await h.watch.start();
    expect(classes(h)).toBe(1);
    const lists = h.kube.requests("list", "GatewayClass");

    h.kube.failNext(3, 404, { kind: "GatewayClass" });
    h.kube.dropAllWatches();
    await eventually(
      () => h.kube.requests("list", "GatewayClass") >= lists + 3,
      5_000,
      "the lists after the 404s",
    );
    await sleep(100);
    expect(classes(h)).toBe(1);
    expect(counts.filter((count) => count === 0)).toEqual([]);
    expect(logged(h, "the API server does not serve")).toEqual([]);
  });

  it("empties a kind whose 404 outlasts the grace (its CRD uninstalled) and says so once, for that kind alone", async () => {
    const h = await setUp((kube) => kube.apply(GATEWAY_CLASS), { routeKinds: true, forbiddenReportMs: 300 });
    await h.watch.start();
    h.kube.failNext(10_000, 404, { kind: "GatewayClass" });
    h.kube.dropAllWatches();
    await eventually(() => classes(h) === 0, 5_000, "the uninstalled kind read as empty");
    expect(logged(h, "the API server serves this API group but not this kind")).toHaveLength(1);
    expect(logged(h, "the API server does not serve")).toEqual([]);
    expect(h.watch.health().missing).toEqual(["gatewayclasses (cluster)"]);
  });

  it("counts a 404 as an answer to an authorised request: a refusal before it is not carried into a later start-up's 403s", async () => {
    const h = await setUp(
      undefined,
      {
        routeKinds: true,
        forbiddenReportMs: 400,
        missingKindRetryMs: 50,
      },
      { gatewayApi: false, bookmarkIntervalMs: 50 },
    );
    await h.watch.start();
    // An API server starting: its RBAC refuses twice, then the kind is (still) not installed.
    h.kube.failNext(2, 403, { kind: "GatewayClass" });
    await eventually(() => h.kube.requests("list", "GatewayClass") >= 5, 5_000, "lists past the refusals");
    await sleep(600); // longer than the report bound since the first refusal
    h.kube.failNext(1, 403, { kind: "GatewayClass" });
    const lists = h.kube.requests("list", "GatewayClass");
    await eventually(
      () => h.kube.requests("list", "GatewayClass") >= lists + 2,
      5_000,
      "lists past the refusal",
    );
    expect(logged(h, "informer not authorised")).toEqual([]);
    expect(h.watch.health().refused).toEqual([]);
  });

  it("reads GRPCRoutes as none when RBAC refuses them (a ClusterRole that predates them), says so once, and serves the rest", async () => {
    const h = await setUp((kube) => kube.apply(GATEWAY_CLASS), {
      routeKinds: true,
      forbiddenReportMs: 300,
      missingKindRetryMs: 50,
    });
    h.kube.failNext(10_000, 403, { kind: "GRPCRoute" });
    await h.watch.start();
    expect(classes(h)).toBe(1);
    await eventually(
      () => h.kube.requests("list", "GRPCRoute") >= 3,
      5_000,
      "the refused kind listed again on its retry",
    );
    expect(logged(h, "GRPCRoutes are not readable")).toHaveLength(1);
    expect(h.watch.health().missing).toEqual(["grpcroutes (all namespaces)"]);
    expect(h.watch.routeObjects?.().grpcRoutes).toEqual([]);
  });
});
