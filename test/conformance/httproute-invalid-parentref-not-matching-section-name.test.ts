import { httpRouteObject, INFRA } from "./support/conformance-base.js";
import { describeRefusedRoute } from "./support/refused-route.js";

/**
 * Conformance HTTPRouteInvalidParentRefNotMatchingSectionName: a parentRef naming a listener the Gateway does
 * not have (`http1`) attaches nowhere: Accepted=False/NoMatchingParent, nothing counted on the Gateway.
 */
describeRefusedRoute("HTTPRouteInvalidParentRefNotMatchingSectionName", {
  objects: [
    httpRouteObject("httproute-listener-not-matching-section-name", {
      parentRefs: [{ name: "same-namespace", namespace: INFRA, port: 80, sectionName: "http1" }],
      rules: [{ backendRefs: [{ name: "infra-backend-v1", kind: "Service", port: 8080 }] }],
    }),
  ],
  route: "httproute-listener-not-matching-section-name",
  gateway: "same-namespace",
  reason: "NoMatchingParent",
});
