import { describe, expect, it } from "vitest";
import { sleep } from "../../../lib/async.js";
import type { FakeKind } from "../../fake-kube/resources.js";
import type { FakeKube } from "../../fake-kube/server.js";
import { eventually } from "../../support/eventually.js";
import { clusterWatches, type Harness } from "./cluster-watch-kit.js";

const GATEWAY_KINDS: readonly FakeKind[] = [
  "GatewayClass",
  "Gateway",
  "HTTPRoute",
  "GRPCRoute",
  "TLSRoute",
  "ReferenceGrant",
  "BackendTLSPolicy",
];
const NOT_SERVED = "the API server does not serve this API group";

function seedRoutes(kube: FakeKube): void {
  kube.apply({
    apiVersion: "networking.k8s.io/v1",
    kind: "IngressClass",
    metadata: { name: "edgeslice" },
    spec: { controller: "edgeslice.io/ingress-controller" },
  });
  kube.apply({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "site", namespace: "shop" },
    spec: {
      ingressClassName: "edgeslice",
      defaultBackend: { service: { name: "web", port: { number: 80 } } },
    },
  });
  kube.apply({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "GatewayClass",
    metadata: { name: "edgeslice" },
    spec: { controllerName: "edgeslice.io/gateway-controller" },
  });
}

const logged = (h: Harness, message: string) => h.logs.filter((entry) => entry.message.startsWith(message));
const counts = (h: Harness) => {
  const objects = h.watch.routeObjects?.();
  return { ingresses: objects?.ingresses.length, gatewayClasses: objects?.gatewayClasses.length };
};

describe("route kinds' reflectors on the fake API server", () => {
  const { setUp } = clusterWatches();

  it("reads a Gateway API the API server does not serve as empty, says so once for the group across retries, and reads the rest", async () => {
    const h = await setUp(
      seedRoutes,
      { routeKinds: true, missingKindRetryMs: 100 },
      { bookmarkIntervalMs: 50, gatewayApi: false },
    );
    await h.watch.start();
    expect(counts(h)).toEqual({ ingresses: 1, gatewayClasses: 0 });
    await eventually(() => h.kube.requests("list", "GatewayClass") >= 4, 5_000, "three retries of the list");
    expect(logged(h, NOT_SERVED).map((entry) => entry.fields.group)).toEqual([
      "gateway.networking.k8s.io/v1",
    ]);
    expect(h.watch.health().missing).toEqual([
      "gatewayclasses (cluster)",
      "gateways (all namespaces)",
      "httproutes (all namespaces)",
      "grpcroutes (all namespaces)",
      "tlsroutes (all namespaces)",
      "referencegrants (all namespaces)",
      "backendtlspolicies (all namespaces)",
    ]);
    expect(h.errors).toEqual([]);
  });

  it("picks up the Gateway API's objects within the retry once the API server serves it, and says so once", async () => {
    let changes = 0;
    const h = await setUp(
      (kube) => {
        seedRoutes(kube);
        for (const kind of GATEWAY_KINDS) kube.failNext(1_000_000, 404, { kind });
      },
      { routeKinds: true, missingKindRetryMs: 100, onRoutesChanged: () => changes++ },
    );
    await h.watch.start();
    expect(counts(h)).toEqual({ ingresses: 1, gatewayClasses: 0 });
    await sleep(250);
    const before = changes;

    h.kube.clearFailures();
    await eventually(() => counts(h).gatewayClasses === 1, 2_000, "the GatewayClass read once served");
    expect(changes).toBeGreaterThan(before);
    expect(logged(h, NOT_SERVED)).toHaveLength(1);
    await eventually(() => h.watch.health().missing.length === 0, 2_000, "no kind missing");
    // Once for the group, when its last kind is served.
    expect(logged(h, "the API server serves this API group now")).toHaveLength(1);
  });

  it("reads a Gateway API installed without one CRD (GRPCRoute) at once, and says so for that kind alone, never for the group", async () => {
    const h = await setUp(
      (kube) => {
        seedRoutes(kube);
        kube.apply({
          apiVersion: "gateway.networking.k8s.io/v1",
          kind: "GatewayClass",
          metadata: { name: "edgeslice" },
          spec: { controllerName: "edgeslice.io/gateway-controller" },
        });
      },
      { routeKinds: true, missingKindRetryMs: 100 },
      { bookmarkIntervalMs: 50, gatewayApi: false },
    );
    h.kube.installGatewayApi([
      "GatewayClass",
      "Gateway",
      "HTTPRoute",
      "TLSRoute",
      "ReferenceGrant",
      "BackendTLSPolicy",
    ]);
    await h.watch.start();
    expect(counts(h)).toEqual({ ingresses: 1, gatewayClasses: 1 });
    await eventually(
      () => h.kube.requests("list", "GRPCRoute") >= 3,
      5_000,
      "two retries of the missing kind",
    );
    expect(logged(h, NOT_SERVED)).toEqual([]);
    expect(
      logged(h, "the API server serves this API group but not this kind").map((e) => e.fields.informer),
    ).toEqual(["grpcroutes (all namespaces)"]);
    expect(h.watch.health().missing).toEqual(["grpcroutes (all namespaces)"]);
  });
});
