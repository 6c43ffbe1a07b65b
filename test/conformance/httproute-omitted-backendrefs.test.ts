import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteNoBackendRefs: a rule whose backendRefs are omitted or empty is answered 500 by the
 * router itself (HTTPRouteRule.backendRefs), while the route stays Accepted with its refs resolved and its
 * other rule forwards.
 */
describeRoutingConformance("HTTPRouteNoBackendRefs", {
  objects: [
    httpRouteObject("omitted-backendrefs", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        { matches: [prefixMatch("/forward")], backendRefs: [backend("infra-backend-v1")] },
        { matches: [prefixMatch("/omitted-no-forward")] },
        { matches: [prefixMatch("/empty-no-forward")], backendRefs: [] },
      ],
    }),
  ],
  routes: [{ name: "omitted-backendrefs" }],
  cases: [
    { path: "/forward", backend: "infra-backend-v1" },
    { path: "/omitted-no-forward", status: 500 },
    { path: "/empty-no-forward", status: 500 },
  ],
});
