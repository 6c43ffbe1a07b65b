import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { headerModifierFilter } from "./support/header-modifiers.js";
import { acceptedAndResolved, untilParents } from "./support/route-parents.js";
import { GATEWAY_ADDRESS } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteRequestHeaderModifierBackendWeights: two backendRefs of equal weight, each with its
 * own RequestHeaderModifier setting `Backend` to its name; every request reaches one of them carrying that
 * backend's value, and both are reached.
 */
let world: Conformance;
const setBackend = (name: string) =>
  backend(name, {
    weight: 10,
    filters: [headerModifierFilter("RequestHeaderModifier", { set: [["Backend", name]] })],
  });

beforeAll(async () => {
  world = await startConformance({
    label: "backend-filters",
    objects: [
      httpRouteObject("request-header-modifier-backend-weights", {
        parentRefs: [{ name: "same-namespace" }],
        rules: [{ backendRefs: [setBackend("infra-backend-v1"), setBackend("infra-backend-v2")] }],
      }),
    ],
  });
  await world.until({ host: GATEWAY_ADDRESS, path: "/" }, (answer) => answer.echo !== undefined);
}, 30_000);

afterAll(() => world?.stop());

describe("conformance HTTPRouteRequestHeaderModifierBackendWeights", () => {
  it("accepts the route with resolved refs", async () => {
    const parents = await untilParents(
      world.cluster.kube,
      INFRA,
      "request-header-modifier-backend-weights",
      (found) => acceptedAndResolved(found, 1),
    );
    expect(acceptedAndResolved(parents, 1)).toBe(true);
  });

  it("sends each request with the Backend header of the backend it reaches, and reaches both", async () => {
    const answers = await Promise.all(
      Array.from({ length: 60 }, () => world.send({ host: GATEWAY_ADDRESS, path: "/" })),
    );
    const seen = new Set<string>();
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      const service = answer.echo?.backend.split("/")[1];
      expect(answer.echo?.headers.backend).toBe(service);
      seen.add(service ?? "");
    }
    // Each request picks either with probability 1/2: missing one in 60 has probability 2^-59.
    expect([...seen].sort()).toEqual(["infra-backend-v1", "infra-backend-v2"]);
  });
});
