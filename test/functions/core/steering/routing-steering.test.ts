import { describe, expect, it } from "vitest";
import { noteAnswer, noteAttemptFailure } from "../../../../functions/core/forwarding/proxy-policy.js";
import { RetryLoop } from "../../../../functions/core/forwarding/retry-loop.js";
import type { ServiceSteering } from "../../../../store/steering.js";
import { seededRandom } from "../../statistics.js";
import { clusterOrder, steered, steeredSnapshot, steeringRig } from "./steering-fixtures.js";

const everyCluster = (steering: ServiceSteering | undefined) => ({
  fra: steering,
  iad: steering,
  pdx: steering,
});
const FRANKFURT_ROUTER = { lat: 50.0, long: 8.5 };
const OREGON_CLIENT = { point: { lat: 45.5, long: -122.7 } };

describe("steering in routing", () => {
  it("leaves a local-first Service's memoised selection untouched: nothing is built per request", async () => {
    const rig = steeringRig(steeredSnapshot(everyCluster(undefined)), { routerLocation: FRANKFURT_ROUTER });
    const first = await steered(rig.routing);
    expect(first.steering).toBeUndefined();
    expect(await steered(rig.routing)).toBe(first);
    expect(first.tiers.map((tier) => tier.name)).toEqual(["all"]);
  });

  it("leaves a steered Service with ready endpoints in one cluster only unsteered", async () => {
    const rig = steeringRig(steeredSnapshot({ fra: { policy: "proximity" } }), {
      routerLocation: FRANKFURT_ROUTER,
    });
    expect((await steered(rig.routing)).steering).toBeUndefined();
  });

  it("sends a proximity Service to the cluster nearest the router, then the next nearest", async () => {
    const rig = steeringRig(steeredSnapshot(everyCluster({ policy: "proximity" })), {
      routerLocation: FRANKFURT_ROUTER,
    });
    const selection = await steered(rig.routing);
    expect(clusterOrder(selection)).toEqual(["fra", "iad", "pdx"]);
    expect(selection.steered).toMatchObject({ cluster: "fra", reason: "nearest" });
  });

  it("measures from the client's place when the request carries one (Workers' request.cf)", async () => {
    const rig = steeringRig(steeredSnapshot(everyCluster({ policy: "proximity" })), {
      routerLocation: FRANKFURT_ROUTER,
    });
    expect(clusterOrder(await steered(rig.routing, OREGON_CLIENT))).toEqual(["pdx", "iad", "fra"]);
    expect(clusterOrder(await steered(rig.routing, { continent: "EU" }))).toEqual(["fra", "iad", "pdx"]);
  });

  it("takes CLUSTER_STEERING for a Service without the annotation", async () => {
    const rig = steeringRig(steeredSnapshot(everyCluster(undefined)), {
      routerLocation: FRANKFURT_ROUTER,
      clusterSteering: "proximity",
    });
    expect(clusterOrder(await steered(rig.routing, OREGON_CLIENT))).toEqual(["pdx", "iad", "fra"]);
  });

  it("keeps to CLUSTER_STEERING when the clusters annotate the Service differently: no cluster decides alone", async () => {
    const rig = steeringRig(
      steeredSnapshot({
        fra: { policy: "weighted", weights: [{ cluster: "fra", weight: 100 }] },
        iad: undefined,
        pdx: undefined,
      }),
      { routerLocation: FRANKFURT_ROUTER },
    );
    const selection = await steered(rig.routing);
    expect(selection.steering).toBeUndefined();
  });

  it("hands out one selection object per order and reason, and counts each request in the steering metric", async () => {
    const rig = steeringRig(steeredSnapshot(everyCluster({ policy: "proximity" })), {
      routerLocation: FRANKFURT_ROUTER,
    });
    const first = await steered(rig.routing);
    expect(await steered(rig.routing)).toBe(first);
    await steered(rig.routing, OREGON_CLIENT);
    expect(rig.routing.policy.metrics.steering.decisions()).toEqual([
      { service: "shop/web", policy: "proximity", cluster: "fra", reason: "nearest", count: 2 },
      { service: "shop/web", policy: "proximity", cluster: "pdx", reason: "nearest", count: 1 },
    ]);
  });

  it("moves a latency Service to the cluster that answers fastest, as the attempts report it", async () => {
    const rig = steeringRig(steeredSnapshot(everyCluster({ policy: "latency" })), {}, seededRandom(3));
    const latencies: Record<string, number> = { fra: 80, iad: 5, pdx: 20 };
    // Enough requests for the probe share to measure every cluster.
    for (let i = 0; i < 300; i++) {
      const selection = await steered(rig.routing);
      const loop = new RetryLoop(selection, true, rig.routing.policy);
      const backend = loop.next();
      if (!backend) throw new Error("no backend");
      rig.now += latencies[backend.cluster] ?? 0;
      loop.settle(backend, { ok: true, value: 200 }, { canResend: () => true });
      rig.now += 100;
    }
    let selection = await steered(rig.routing);
    while (selection.steered?.reason === "probe") selection = await steered(rig.routing);
    expect(selection.steered).toMatchObject({ cluster: "iad", reason: "fastest" });
    expect(clusterOrder(selection)).toEqual(["iad", "pdx", "fra"]);
    const ewma = (name: string) => rig.routing.steering.state.track(name).ewmaMs ?? 0;
    expect(ewma("iad")).toBeLessThan(ewma("pdx"));
    expect(ewma("pdx")).toBeLessThan(ewma("fra"));
  });

  it("retries a failed attempt in the next cluster of the order, not on another pod of the one that failed", async () => {
    const rig = steeringRig(steeredSnapshot(everyCluster({ policy: "proximity" })), {
      routerLocation: FRANKFURT_ROUTER,
    });
    const loop = new RetryLoop(await steered(rig.routing), true, rig.routing.policy);
    const tried: string[] = [];
    for (let backend = loop.next(); backend; backend = loop.next()) {
      tried.push(backend.cluster);
      const failure = noteAttemptFailure(backend, undefined, true, new Error("refused"), rig.routing.policy);
      if (!loop.settle(backend, failure, { canResend: () => true })) break;
    }
    expect(tried).toEqual(["fra", "iad", "pdx"]);
  });

  it("steps a cluster over after five failed attempts in a row, so the next requests start in the next nearest", async () => {
    const rig = steeringRig(steeredSnapshot(everyCluster({ policy: "proximity" })), {
      routerLocation: FRANKFURT_ROUTER,
    });
    for (let i = 0; i < 5; i++) {
      const loop = new RetryLoop(await steered(rig.routing), true, rig.routing.policy);
      const backend = loop.next();
      if (!backend) throw new Error("no backend");
      noteAnswer(backend, 503, rig.routing.policy);
      loop.settle(backend, { ok: true, value: 503 }, { canResend: () => true });
    }
    const selection = await steered(rig.routing);
    expect(selection.steered).toMatchObject({ cluster: "iad", reason: "failover" });
    expect(clusterOrder(selection)).toEqual(["iad", "pdx", "fra"]);
    // Two seconds on, a twentieth of the requests probe Frankfurt again.
    rig.now += 2_000;
    expect(rig.routing.steering.state.track("fra").state(rig.now)).toBe("recovering");
  });
});
