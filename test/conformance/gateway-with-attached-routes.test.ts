import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, gatewayObject, httpListener, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { asFound, untilListeners, workingListener } from "./support/gateway-listeners.js";

/**
 * Conformance GatewayWithAttachedRoutes and GatewayWithAttachedRoutesWithPort8080: each listener's status
 * counts the routes attached to it (one, two), and a route naming a listener by sectionName counts there
 * only, not on the Gateway's other listener on 8080.
 */
let world: Conformance;
const infraOnly = {
  allowedRoutes: {
    kinds: [{ kind: "HTTPRoute" }],
    namespaces: { from: "Selector", selector: { matchLabels: { "kubernetes.io/metadata.name": INFRA } } },
  },
};
const fromAll = { allowedRoutes: { kinds: [{ kind: "HTTPRoute" }], namespaces: { from: "All" } } };
const route = (name: string, gateway: string, sectionName?: string) =>
  httpRouteObject(name, {
    parentRefs: [
      { kind: "Gateway", name: gateway, namespace: INFRA, ...(sectionName ? { sectionName } : {}) },
    ],
    rules: [{ backendRefs: [backend("infra-backend-v1")] }],
  });
const ONE = "gateway-with-one-attached-route";
const TWO = "gateway-with-two-attached-routes";
const TWO_LISTENERS = "gateway-with-two-listeners-and-one-attached-route";

beforeAll(async () => {
  world = await startConformance({
    label: "attached",
    objects: [
      gatewayObject(ONE, [httpListener("http", 80, infraOnly)]),
      route("http-route-1", ONE),
      gatewayObject(TWO, [httpListener("http", 80, infraOnly)]),
      route("http-route-2", TWO),
      route("http-route-3", TWO),
      gatewayObject(TWO_LISTENERS, [
        httpListener("http-unattached", 8080, fromAll),
        httpListener("http", 80, fromAll),
      ]),
      route("http-route-4-port8080", TWO_LISTENERS, "http"),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance GatewayWithAttachedRoutes", () => {
  it("counts one valid HTTPRoute attached to the listener", async () => {
    const expected = [workingListener("http", 1)];
    expect(await untilListeners(world.cluster.kube, ONE, expected)).toEqual(asFound(expected));
  });

  it("counts two valid HTTPRoutes attached to the listener", async () => {
    const expected = [workingListener("http", 2)];
    expect(await untilListeners(world.cluster.kube, TWO, expected)).toEqual(asFound(expected));
  });
});

describe("conformance GatewayWithAttachedRoutesWithPort8080", () => {
  it("counts the route on the listener its sectionName names, none on the other listener", async () => {
    const expected = [workingListener("http-unattached", 0), workingListener("http", 1)];
    expect(await untilListeners(world.cluster.kube, TWO_LISTENERS, expected)).toEqual(asFound(expected));
  });
});
