import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APP, backend, httpRouteObject, INFRA, prefixMatch } from "./support/conformance-base.js";
import { type Conformance, startConformance } from "./support/conformance-fixture.js";
import { untilParents } from "./support/route-parents.js";
import { GATEWAY_ADDRESS } from "./support/routing-cases.js";

/**
 * Conformance HTTPRoutePartiallyInvalidViaInvalidReferenceGrant: a ReferenceGrant in the app namespace lets
 * the infra namespace's routes reach app-backend-v1 but not app-backend-v2. The route stays Accepted with
 * ResolvedRefs=False RefNotPermitted; its rule to v2 answers 500 and its rule to v1 keeps serving.
 */
let world: Conformance;
const ROUTE = "invalid-reference-grant";

beforeAll(async () => {
  world = await startConformance({
    label: "partial-grant",
    objects: [
      {
        apiVersion: "gateway.networking.k8s.io/v1beta1",
        kind: "ReferenceGrant",
        metadata: { name: "reference-grant-for-v1-only", namespace: APP },
        spec: {
          from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: INFRA }],
          to: [{ group: "", kind: "Service", name: "app-backend-v1" }],
        },
      },
      httpRouteObject(ROUTE, {
        parentRefs: [{ name: "same-namespace" }],
        rules: [
          { matches: [prefixMatch("/v2")], backendRefs: [backend("app-backend-v2", { namespace: APP })] },
          { backendRefs: [backend("app-backend-v1", { namespace: APP })] },
        ],
      }),
    ],
  });
}, 30_000);

afterAll(() => world?.stop());

describe("conformance HTTPRoutePartiallyInvalidViaInvalidReferenceGrant", () => {
  it("keeps the route Accepted with ResolvedRefs=False RefNotPermitted", async () => {
    const parents = await untilParents(world.cluster.kube, INFRA, ROUTE, (found) =>
      found.some((entry) => entry.conditions.includes("ResolvedRefs=False/RefNotPermitted")),
    );
    expect(parents.map((entry) => entry.parent)).toEqual(["same-namespace"]);
    expect(parents[0]?.conditions).toEqual(
      expect.arrayContaining(["Accepted=True/Accepted", "ResolvedRefs=False/RefNotPermitted"]),
    );
  });

  it("answers the rule to the ungranted Service 500, never from a backend", async () => {
    const answer = await world.until({ host: GATEWAY_ADDRESS, path: "/v2" }, (found) => found.status === 500);
    expect(answer.status).toBe(500);
    expect(answer.echo).toBeUndefined();
  });

  it("serves the sibling rule from the granted app-backend-v1", async () => {
    const answer = await world.until(
      { host: GATEWAY_ADDRESS, path: "/" },
      (found) => found.echo !== undefined,
    );
    expect(answer.status).toBe(200);
    expect(answer.echo?.backend).toBe(`${APP}/app-backend-v1`);
  });
});
