import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { hasLatestConditions, readConditions, untilConditions } from "./support/latest-conditions.js";

/**
 * Conformance HTTPRouteObservedGenerationBump: after a change of the route's spec (its backendRef renamed),
 * every condition of its parents carries the new generation, and the route stays Accepted.
 */
let world: Conformance;
const ROUTE = "observed-generation-bump";
const route = (service: string) =>
  httpRouteObject(ROUTE, {
    parentRefs: [{ name: "same-namespace" }],
    rules: [{ backendRefs: [backend(service)] }],
  });

beforeAll(async () => {
  world = await startConformance({ label: "route-gen", objects: [route("infra-backend-old")] });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance HTTPRouteObservedGenerationBump", () => {
  it("writes the new generation into every condition after a spec change, still Accepted", async () => {
    const read = () => readConditions(world.cluster.kube, "HTTPRoute", INFRA, ROUTE);
    const before = await untilConditions(read, hasLatestConditions);
    expect(hasLatestConditions(before)).toBe(true);

    world.cluster.kube.apply(route("infra-backend-v2"));
    const after = await untilConditions(
      read,
      (found) => found.generation !== before.generation && hasLatestConditions(found),
    );
    expect(after.generation).not.toBe(before.generation);
    expect(hasLatestConditions(after)).toBe(true);
    expect(after.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: "Accepted", status: "True" })]),
    );
  });
});
