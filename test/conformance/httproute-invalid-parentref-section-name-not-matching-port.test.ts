import { gatewayObject, httpListener, httpRouteObject, INFRA } from "./support/conformance-base.js";
import { describeRefusedRoute } from "./support/refused-route.js";

/**
 * Conformance HTTPRouteInvalidParentRefSectionNameNotMatchingPort: a parentRef naming listener `http` (port 80)
 * with port 81 matches no listener: Accepted=False/NoMatchingParent, nothing attached.
 */
const GATEWAY = "gw-with-one-section-name-not-matching-port-route";

describeRefusedRoute("HTTPRouteInvalidParentRefSectionNameNotMatchingPort", {
  objects: [
    gatewayObject(GATEWAY, [
      httpListener("http", 80, {
        allowedRoutes: { kinds: [{ kind: "HTTPRoute" }], namespaces: { from: "All" } },
      }),
    ]),
    httpRouteObject("httproute-listener-section-name-not-matching-port", {
      parentRefs: [{ name: GATEWAY, namespace: INFRA, sectionName: "http", port: 81 }],
      rules: [{ backendRefs: [{ name: "infra-backend-v1", kind: "Service", port: 8080 }] }],
    }),
  ],
  route: "httproute-listener-section-name-not-matching-port",
  gateway: GATEWAY,
  reason: "NoMatchingParent",
});
