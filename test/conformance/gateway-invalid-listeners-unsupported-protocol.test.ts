import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, gatewayObject, httpListener, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import {
  asFound,
  type ExpectedListener,
  HTTP_ROUTE_KIND,
  untilListeners,
} from "./support/gateway-listeners.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance GatewayListenerUnsupportedProtocol: a listener of an unknown protocol is Accepted=False
 * UnsupportedProtocol with no supported kinds. A Gateway with no other listener is not Accepted
 * (ListenersNotValid); one with a valid HTTP listener too is Accepted, reason ListenersNotValid.
 */
let world: Conformance;
const ONLY_UNSUPPORTED = "gateway-only-unsupported-protocols";
const MIXED = "gateway-supported-and-unsupported-protocols";
const invalid = { name: "invalid", port: 1111, protocol: "INVALID" };
const unsupported: ExpectedListener = {
  name: "invalid",
  supportedKinds: [],
  conditions: ["Accepted=False/UnsupportedProtocol"],
  attachedRoutes: 0,
};

beforeAll(async () => {
  world = await startConformance({
    label: "unsupported-proto",
    objects: [
      gatewayObject(ONLY_UNSUPPORTED, [invalid]),
      gatewayObject(MIXED, [
        httpListener("http", 80, { allowedRoutes: { namespaces: { from: "Same" } } }),
        invalid,
      ]),
      httpRouteObject("gateway-supported-and-unsupported-protocols-control", {
        parentRefs: [{ name: MIXED, sectionName: "http" }],
        hostnames: ["unsupported-protocol.example.com"],
        rules: [{ backendRefs: [backend("infra-backend-v1")] }],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

const gatewayAccepted = async (gateway: string) => {
  const found = await untilConditions(
    () => readConditions(world.cluster.kube, "Gateway", INFRA, gateway),
    hasLatestConditions,
  );
  expect(hasLatestConditions(found)).toBe(true);
  const accepted = found.conditions.find((item) => item.type === "Accepted");
  return `${accepted?.status}/${accepted?.reason}`;
};

describe("conformance GatewayListenerUnsupportedProtocol", () => {
  it("does not accept a Gateway whose only listener has an unsupported protocol", async () => {
    expect(await gatewayAccepted(ONLY_UNSUPPORTED)).toBe("False/ListenersNotValid");
    const expected = [unsupported];
    expect(await untilListeners(world.cluster.kube, ONLY_UNSUPPORTED, expected)).toEqual(asFound(expected));
  });

  it("accepts a Gateway with one valid listener, saying ListenersNotValid, and rejects the other listener", async () => {
    expect(await gatewayAccepted(MIXED)).toBe("True/ListenersNotValid");
    // The control route attaches to the HTTP listener (the spec counts it; the suite's table says 0 there).
    const expected: ExpectedListener[] = [
      {
        name: "http",
        supportedKinds: [HTTP_ROUTE_KIND],
        conditions: ["Accepted=True/Accepted"],
        attachedRoutes: 1,
      },
      unsupported,
    ];
    expect(await untilListeners(world.cluster.kube, MIXED, expected)).toEqual(asFound(expected));
  });
});
