import { expect, it } from "vitest";
import { APP, backend, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { untilParents } from "./support/route-parents.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteInvalidReferenceGrant: a ReferenceGrant in the app namespace allows app-backend-v1
 * only; the route's rule to app-backend-v2 is answered 500 and reported ResolvedRefs=False/RefNotPermitted,
 * while its sibling rule to app-backend-v1 is served. The route stays Accepted.
 */
const ROUTE = "invalid-reference-grant";

describeRoutingConformance("HTTPRouteInvalidReferenceGrant", {
  objects: [
    {
      apiVersion: "gateway.networking.k8s.io/v1beta1",
      kind: "ReferenceGrant",
      metadata: { name: "invalid-reference-grant", namespace: APP },
      spec: {
        from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: INFRA }],
        to: [{ group: "", kind: "Service", name: "app-backend-v1" }],
      },
    },
    httpRouteObject(ROUTE, {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/v2" } }],
          backendRefs: [backend("app-backend-v2", { namespace: APP })],
        },
        { backendRefs: [backend("app-backend-v1", { namespace: APP })] },
      ],
    }),
  ],
  routes: [],
  cases: [
    { path: "/", backend: `${APP}/app-backend-v1` },
    { path: "/v2", status: 500 },
  ],
  more: (world) => {
    it("keeps the route Accepted and reports ResolvedRefs=False/RefNotPermitted", async () => {
      const wanted = ["Accepted=True/Accepted", "ResolvedRefs=False/RefNotPermitted"];
      const parents = await untilParents(world().cluster.kube, INFRA, ROUTE, (found) =>
        wanted.every((condition) => found[0]?.conditions.includes(condition) === true),
      );
      expect(parents).toEqual([{ parent: "same-namespace", conditions: expect.arrayContaining(wanted) }]);
    });
  },
});
