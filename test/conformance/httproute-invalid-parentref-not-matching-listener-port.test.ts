import { httpRouteObject, INFRA } from "./support/conformance-base.js";
import { describeRefusedRoute } from "./support/refused-route.js";

/**
 * Conformance HTTPRouteInvalidParentRefNotMatchingListenerPort: a parentRef port (81) that no listener of the
 * Gateway has attaches nowhere: Accepted=False/NoMatchingParent.
 */
describeRefusedRoute("HTTPRouteInvalidParentRefNotMatchingListenerPort", {
  objects: [
    httpRouteObject("httproute-listener-not-matching-route-port", {
      parentRefs: [{ name: "same-namespace", namespace: INFRA, port: 81 }],
      rules: [{ backendRefs: [{ name: "infra-backend-v1", kind: "Service", port: 8080 }] }],
    }),
  ],
  route: "httproute-listener-not-matching-route-port",
  gateway: "same-namespace",
  reason: "NoMatchingParent",
});
