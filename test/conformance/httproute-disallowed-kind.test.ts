import { backend, gatewayObject, httpRouteObject } from "./support/conformance-base.js";
import { describeRefusedRoute } from "./support/refused-route.js";
import { passthroughListener } from "./support/tls-route-fixture.js";

/**
 * Conformance HTTPRouteDisallowedKind: a Gateway whose only listener is TLS (Passthrough) and allows TLSRoutes
 * only takes no HTTPRoute: the route's parent says Accepted=False/NotAllowedByListeners with its refs resolved,
 * and the listener counts no route.
 */
describeRefusedRoute("HTTPRouteDisallowedKind", {
  objects: [
    gatewayObject("tlsroutes-only", [{ ...passthroughListener("tls"), hostname: undefined }]),
    httpRouteObject("disallowed-kind", {
      parentRefs: [{ name: "tlsroutes-only", namespace: "gateway-conformance-infra" }],
      rules: [{ backendRefs: [backend("infra-backend-v1")] }],
    }),
  ],
  route: "disallowed-kind",
  gateway: "tlsroutes-only",
  reason: "NotAllowedByListeners",
  alsoConditions: ["ResolvedRefs=True/ResolvedRefs"],
});
