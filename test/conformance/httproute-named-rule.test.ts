import { backend, httpRouteObject, prefixMatch } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/** Conformance HTTPRouteNamedRule: a rule with a name routes as an unnamed one does (HTTPRouteRule.name). */
describeRoutingConformance("HTTPRouteNamedRule", {
  objects: [
    httpRouteObject("http-named-rules", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [
        { name: "named-rule", matches: [prefixMatch("/named")], backendRefs: [backend("infra-backend-v1")] },
        { matches: [prefixMatch("/unnamed")], backendRefs: [backend("infra-backend-v2")] },
      ],
    }),
  ],
  routes: [{ name: "http-named-rules" }],
  cases: [
    { path: "/named", backend: "infra-backend-v1" },
    { path: "/unnamed", backend: "infra-backend-v2" },
  ],
});
