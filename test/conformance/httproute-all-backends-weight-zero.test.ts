import { backend, httpRouteObject } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteAllBackendsWeightZero: a rule whose backendRefs all weigh 0 is Accepted with resolved
 * refs and sends nothing to either backend; the router answers 500, as HTTPBackendRef.weight asks.
 */
describeRoutingConformance("HTTPRouteAllBackendsWeightZero", {
  objects: [
    httpRouteObject("all-backends-weight-zero", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        {
          backendRefs: [
            backend("infra-backend-v1", { weight: 0 }),
            backend("infra-backend-v2", { weight: 0 }),
          ],
        },
      ],
    }),
  ],
  routes: [{ name: "all-backends-weight-zero" }],
  cases: [{ path: "/", status: 500 }],
});
