import { backend, httpRouteObject } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/** Conformance HTTPRouteSimpleSameNamespace: one route of the Gateway's namespace, one backend. */
describeRoutingConformance("HTTPRouteSimpleSameNamespace", {
  objects: [
    httpRouteObject("gateway-conformance-infra-test", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [{ backendRefs: [backend("infra-backend-v1")] }],
    }),
  ],
  routes: [{ name: "gateway-conformance-infra-test" }],
  cases: [{ path: "/", backend: "infra-backend-v1" }],
});
