import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, gatewayObject, httpListener, httpRouteObject } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import {
  asFound,
  type ExpectedListener,
  HTTP_ROUTE_KIND,
  untilListeners,
} from "./support/gateway-listeners.js";

/**
 * Conformance GatewayInvalidRouteKind: a listener allowing only a kind no one implements supports no kinds;
 * one allowing that kind and HTTPRoute supports HTTPRoute; both say ResolvedRefs=False InvalidRouteKinds.
 */
let world: Conformance;
const ONLY_INVALID = "gateway-only-invalid-route-kind";
const SUPPORTED_AND_INVALID = "gateway-supported-and-invalid-route-kind";
const listener = (kinds: string[]) =>
  httpListener("http", 80, {
    allowedRoutes: { namespaces: { from: "All" }, kinds: kinds.map((kind) => ({ kind })) },
  });
const invalidKinds = (supportedKinds: string[], attachedRoutes: number): ExpectedListener[] => [
  { name: "http", supportedKinds, conditions: ["ResolvedRefs=False/InvalidRouteKinds"], attachedRoutes },
];

beforeAll(async () => {
  world = await startConformance({
    label: "invalid-kind",
    objects: [
      gatewayObject(ONLY_INVALID, [listener(["InvalidRoute"])]),
      gatewayObject(SUPPORTED_AND_INVALID, [listener(["InvalidRoute", "HTTPRoute"])]),
      httpRouteObject("gateway-supported-and-invalid-route-kind-control", {
        parentRefs: [{ name: SUPPORTED_AND_INVALID, sectionName: "http" }],
        hostnames: ["supported-route-kind.example.com"],
        rules: [{ backendRefs: [backend("infra-backend-v1")] }],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance GatewayInvalidRouteKind", () => {
  it("says InvalidRouteKinds and supports no kinds on a listener allowing only an invalid kind", async () => {
    const expected = invalidKinds([], 0);
    expect(await untilListeners(world.cluster.kube, ONLY_INVALID, expected)).toEqual(asFound(expected));
  });

  it("says InvalidRouteKinds and supports HTTPRoute on a listener allowing an invalid kind and HTTPRoute", async () => {
    // The control route attaches through HTTPRoute (ListenerStatus.attachedRoutes: attachment depends on
    // allowedRoutes and parentRefs alone); the suite's table says 0 there.
    const expected = invalidKinds([HTTP_ROUTE_KIND], 1);
    const found = await untilListeners(world.cluster.kube, SUPPORTED_AND_INVALID, expected);
    expect(found).toEqual(asFound(expected));
  });
});
