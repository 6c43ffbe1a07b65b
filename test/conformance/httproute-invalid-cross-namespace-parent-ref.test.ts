import { backend, httpRouteObject, INFRA, WEB } from "./support/conformance-base.js";
import { describeRefusedRoute } from "./support/refused-route.js";

/**
 * Conformance HTTPRouteInvalidCrossNamespaceParentRef: a route of the web namespace names the infra Gateway,
 * whose listener admits routes of its own namespace only: Accepted=False/NotAllowedByListeners, no accepted
 * parent, nothing counted on the Gateway; its backendRef resolves (ResolvedRefs=True).
 */
describeRefusedRoute("HTTPRouteInvalidCrossNamespaceParentRef", {
  objects: [
    httpRouteObject(
      "invalid-cross-namespace-parent-ref",
      {
        parentRefs: [{ name: "same-namespace", namespace: INFRA }],
        rules: [{ backendRefs: [backend("web-backend")] }],
      },
      WEB,
    ),
  ],
  route: "invalid-cross-namespace-parent-ref",
  namespace: WEB,
  gateway: "same-namespace",
  reason: "NotAllowedByListeners",
  alsoConditions: ["ResolvedRefs=True/ResolvedRefs"],
});
