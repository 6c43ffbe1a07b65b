import { backend, httpRouteObject, WEB } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteCrossNamespace: a route in the web-backend namespace attached to the infra
 * namespace's Gateway backend-namespaces (namespaces labelled gateway-conformance=backend).
 */
describeRoutingConformance("HTTPRouteCrossNamespace", {
  objects: [
    httpRouteObject(
      "cross-namespace",
      {
        parentRefs: [{ name: "backend-namespaces", namespace: "gateway-conformance-infra" }],
        rules: [{ backendRefs: [backend("web-backend")] }],
      },
      WEB,
    ),
  ],
  routes: [{ name: "cross-namespace", namespace: WEB }],
  cases: [{ path: "/", backend: `${WEB}/web-backend` }],
});
