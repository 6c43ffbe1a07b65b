import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backend, httpRouteObject, INFRA, WEB } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { untilParents } from "./support/route-parents.js";
import { GATEWAY_ADDRESS } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteInvalidCrossNamespaceBackendRef: a backendRef to a Service of another namespace that
 * no ReferenceGrant allows: the route is Accepted, ResolvedRefs=False RefNotPermitted, and its requests are
 * answered 500 rather than sent elsewhere.
 */
let world: Conformance;
const NAME = "invalid-cross-namespace-backend-ref";

beforeAll(async () => {
  world = await startConformance({
    label: "invalid-xns",
    objects: [
      httpRouteObject(NAME, {
        parentRefs: [{ name: "same-namespace" }],
        rules: [{ backendRefs: [backend("web-backend", { namespace: WEB })] }],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance HTTPRouteInvalidCrossNamespaceBackendRef", () => {
  it("keeps the route Accepted with ResolvedRefs=False RefNotPermitted", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, NAME, (found) =>
      found.some((entry) => entry.conditions.includes("ResolvedRefs=False/RefNotPermitted")),
    );
    expect(parents.map((entry) => entry.parent)).toEqual(["same-namespace"]);
    expect(parents[0]?.conditions).toEqual(
      expect.arrayContaining(["Accepted=True/Accepted", "ResolvedRefs=False/RefNotPermitted"]),
    );
  });

  it("answers the route's requests 500, never from another backend", async () => {
    const answer = await world.until({ host: GATEWAY_ADDRESS, path: "/" }, (found) => found.status !== 404);
    expect(answer.status).toBe(500);
    expect(answer.echo).toBeUndefined();
  });
});
