import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayObject, httpListener, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance GatewayObservedGenerationBump: after a listener on 8080 is added to the Gateway's spec, every
 * condition of the Gateway and of its listeners carries the new generation.
 */
let world: Conformance;
const GATEWAY = "gateway-observed-generation-bump";
const fromAll = { allowedRoutes: { namespaces: { from: "All" } } };

beforeAll(async () => {
  world = await startConformance({
    label: "gateway-gen",
    objects: [gatewayObject(GATEWAY, [httpListener("http", 80, fromAll)])],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance GatewayObservedGenerationBump", () => {
  it("writes the new generation into every Gateway and listener condition after a spec change", async () => {
    const read = () => readConditions(world.cluster.kube, "Gateway", INFRA, GATEWAY);
    const before = await untilConditions(read, hasLatestConditions);
    expect(hasLatestConditions(before)).toBe(true);

    world.cluster.kube.apply(
      gatewayObject(GATEWAY, [httpListener("http", 80, fromAll), httpListener("alternate", 8080, fromAll)]),
    );
    const after = await untilConditions(
      read,
      (found) => found.generation !== before.generation && hasLatestConditions(found),
    );
    expect(after.generation).not.toBe(before.generation);
    expect(hasLatestConditions(after)).toBe(true);
    // The Gateway's two conditions and four per listener, for both listeners now.
    expect(after.conditions.length).toBeGreaterThan(before.conditions.length);
  });
});
