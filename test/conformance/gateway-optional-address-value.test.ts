import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_API, httpListener, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance GatewayOptionalAddressValue (GatewayAddressEmpty): a Gateway asking for an IPAddress without a
 * value is given one: the routers' address GATEWAY_ADDRESSES names (127.0.0.1 in this world) appears in
 * status.addresses, and the Gateway is Accepted and Programmed at its generation.
 */
let world: Conformance;
const GATEWAY = "gateway-without-address-value";

beforeAll(async () => {
  world = await startConformance({
    label: "address-empty",
    objects: [
      {
        apiVersion: GATEWAY_API,
        kind: "Gateway",
        metadata: { name: GATEWAY, namespace: INFRA },
        spec: {
          gatewayClassName: "edgeslice",
          addresses: [{ type: "IPAddress" }],
          listeners: [httpListener("http", 80, { allowedRoutes: { namespaces: { from: "All" } } })],
        },
      },
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance GatewayOptionalAddressValue", () => {
  it("assigns the Gateway an address of the type it asked for", async () => {
    const found = await untilConditions(
      () => readConditions(world.cluster.kube, "Gateway", INFRA, GATEWAY),
      hasLatestConditions,
    );
    expect(hasLatestConditions(found)).toBe(true);
    expect(found.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "Accepted", status: "True" }),
        expect.objectContaining({ type: "Programmed", status: "True" }),
      ]),
    );
    const status = world.cluster.kube.get("Gateway", INFRA, GATEWAY)?.status as { addresses?: unknown };
    expect(status.addresses).toEqual([{ type: "IPAddress", value: "127.0.0.1" }]);
  });
});
