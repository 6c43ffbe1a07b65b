import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApplyInput } from "../fake-kube/store.js";
import { GATEWAY_API } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance GatewayClassObservedGenerationBump: a GatewayClass of our controller is Accepted, and after a
 * change of its spec (the description) its conditions carry the new generation.
 */
let world: Conformance;
const CLASS = "gatewayclass-observed-generation-bump";
const gatewayClass = (description: string): ApplyInput => ({
  apiVersion: GATEWAY_API,
  kind: "GatewayClass",
  metadata: { name: CLASS },
  spec: { controllerName: "edgeslice.io/gateway-controller", description },
});

beforeAll(async () => {
  world = await startConformance({ label: "class-gen", objects: [gatewayClass("old")] });
}, 30_000);

afterAll(() => world?.stop());

const accepted = (found: ReturnType<typeof readConditions>) =>
  hasLatestConditions(found) &&
  found.conditions.some((item) => item.type === "Accepted" && item.status === "True");

describe("conformance GatewayClassObservedGenerationBump", () => {
  it("accepts the class, then writes its new generation into every condition after a spec change", async () => {
    const read = () => readConditions(world.cluster.kube, "GatewayClass", undefined, CLASS);
    const before = await untilConditions(read, accepted);
    expect(accepted(before)).toBe(true);

    world.cluster.kube.apply(gatewayClass("new"));
    const after = await untilConditions(
      read,
      (found) => found.generation !== before.generation && accepted(found),
    );
    expect(after.generation).not.toBe(before.generation);
    expect(accepted(after)).toBe(true);
  });
});
