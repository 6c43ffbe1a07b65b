import { REQUEST_MODIFIER_CASES, requestModifierRoute } from "./support/request-header-cases.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteBackendRequestHeaderModifier: the requests of HTTPRouteRequestHeaderModifier, each rule's
 * RequestHeaderModifier sitting on its backendRef instead of the rule.
 */
describeRoutingConformance("HTTPRouteBackendRequestHeaderModifier", {
  objects: [requestModifierRoute("backendRef")],
  routes: [{ name: "request-header-modifier" }],
  cases: REQUEST_MODIFIER_CASES,
});
