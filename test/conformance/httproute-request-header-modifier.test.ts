import { REQUEST_MODIFIER_CASES, requestModifierRoute } from "./support/request-header-cases.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/** Conformance HTTPRouteRequestHeaderModifier: RequestHeaderModifier filters on the rules. */
describeRoutingConformance("HTTPRouteRequestHeaderModifier", {
  objects: [requestModifierRoute("rule")],
  routes: [{ name: "request-header-modifier" }],
  cases: REQUEST_MODIFIER_CASES,
});
