import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApplyInput } from "../../fake-kube/store.js";
import { httpRouteObject, INFRA } from "./conformance-base.js";
import { type Conformance, startConformance } from "./conformance-fixture.js";
import { untilParents } from "./route-parents.js";
import { GATEWAY_ADDRESS } from "./routing-cases.js";

/**
 * An official test of a backendRef that does not resolve: the route stays Accepted, says ResolvedRefs=False
 * with `reason`, and its requests are answered 500 (HTTPRouteRule.backendRefs), never from another backend.
 */
export function describeUnresolvedRefConformance(
  name: string,
  route: string,
  backendRef: Record<string, unknown>,
  reason: string,
  extra: readonly ApplyInput[] = [],
): void {
  let world: Conformance;
  beforeAll(async () => {
    world = await startConformance({
      label: route.slice(0, 16),
      objects: [
        ...extra,
        httpRouteObject(route, {
          parentRefs: [{ name: "same-namespace" }],
          rules: [{ backendRefs: [backendRef] }],
        }),
      ],
    });
  }, 30_000);
  afterAll(() => world?.stop());

  describe(`conformance ${name}`, () => {
    it(`keeps the route Accepted with ResolvedRefs=False ${reason}`, async () => {
      const parents = await untilParents(world.cluster.kube, INFRA, route, (found) =>
        found.some((entry) => entry.conditions.includes(`ResolvedRefs=False/${reason}`)),
      );
      expect(parents[0]?.conditions).toEqual(
        expect.arrayContaining(["Accepted=True/Accepted", `ResolvedRefs=False/${reason}`]),
      );
    });

    it("answers the route's requests 500, never from another backend", async () => {
      const answer = await world.until({ host: GATEWAY_ADDRESS, path: "/" }, (found) => found.status !== 404);
      expect(answer.status).toBe(500);
      expect(answer.echo).toBeUndefined();
    });
  });
}
