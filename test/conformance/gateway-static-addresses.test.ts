import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_API, httpListener, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { asFound, untilListeners, workingListener } from "./support/gateway-listeners.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance GatewayStaticAddresses. edgeslice allocates no addresses: a static address is usable when it is
 * one of the addresses the operator says the Gateway's routers are reached at (GATEWAY_ADDRESSES: 127.0.0.1
 * in this world; the suite's UsableNetworkAddresses), and 127.0.0.2 stands for an unusable one. With an
 * address of an unknown type the Gateway is not accepted; without it, it is accepted but not programmed while
 * the unusable address is asked for; with only the usable one it is programmed and reports that address.
 */
let world: Conformance;
const GATEWAY = "gateway-static-addresses";
const INVALID = { type: "test/fake-invalid-type", value: "invalid" };
const UNUSABLE = { type: "IPAddress", value: "127.0.0.2" };
const USABLE = { type: "IPAddress", value: "127.0.0.1" };
const gateway = (addresses: readonly Record<string, string>[]) => ({
  apiVersion: GATEWAY_API,
  kind: "Gateway",
  metadata: { name: GATEWAY, namespace: INFRA },
  spec: {
    gatewayClassName: "edgeslice",
    addresses,
    listeners: [httpListener("http", 80, { allowedRoutes: { namespaces: { from: "All" } } })],
  },
});

beforeAll(async () => {
  world = await startConformance({
    label: "static-addresses",
    objects: [gateway([INVALID, UNUSABLE, USABLE])],
  });
}, 30_000);

afterAll(() => world?.stop());

/** The Gateway's Accepted and Programmed as `Type=Status/Reason`, once its conditions follow its generation. */
async function gatewayConditions(): Promise<string[]> {
  const found = await untilConditions(
    () => readConditions(world.cluster.kube, "Gateway", INFRA, GATEWAY),
    (conditions) => hasLatestConditions(conditions) && conditions.generation > 0,
  );
  expect(hasLatestConditions(found)).toBe(true);
  return found.conditions
    .filter((item) => item.type === "Accepted" || item.type === "Programmed")
    .slice(0, 2)
    .map((item) => `${item.type}=${item.status}/${item.reason}`);
}

describe("conformance GatewayStaticAddresses", () => {
  it("does not accept the Gateway while it asks for an address type edgeslice does not know", async () => {
    expect(await gatewayConditions()).toContain("Accepted=False/UnsupportedAddress");
  });

  it("accepts it without that address, not programmed while the unusable address is asked for", async () => {
    world.cluster.kube.apply(gateway([UNUSABLE, USABLE]));
    await untilConditions(
      () => readConditions(world.cluster.kube, "Gateway", INFRA, GATEWAY),
      (found) => found.generation === 2 && hasLatestConditions(found),
    );
    expect(await gatewayConditions()).toEqual([
      "Accepted=True/Accepted",
      "Programmed=False/AddressNotUsable",
    ]);
  });

  it("programs it with the usable address alone, which status.addresses reports", async () => {
    world.cluster.kube.apply(gateway([USABLE]));
    await untilConditions(
      () => readConditions(world.cluster.kube, "Gateway", INFRA, GATEWAY),
      (found) => found.generation === 3 && hasLatestConditions(found),
    );
    expect(await gatewayConditions()).toEqual(["Accepted=True/Accepted", "Programmed=True/Programmed"]);
    const expected = [workingListener("http", 0)];
    expect(await untilListeners(world.cluster.kube, GATEWAY, expected)).toEqual(asFound(expected));
    const status = world.cluster.kube.get("Gateway", INFRA, GATEWAY)?.status as { addresses?: unknown };
    expect(status.addresses).toEqual([USABLE]);
  });
});
