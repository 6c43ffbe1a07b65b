import { WEB } from "./support/conformance-base.js";
import { describeUnresolvedRefConformance } from "./support/unresolved-ref.js";

/**
 * Conformance HTTPRouteInvalidCrossNamespaceBackendRef: a backendRef to a Service of another namespace that
 * no ReferenceGrant allows.
 */
describeUnresolvedRefConformance(
  "HTTPRouteInvalidCrossNamespaceBackendRef",
  "invalid-cross-namespace-backend-ref",
  { name: "web-backend", namespace: WEB, port: 8080 },
  "RefNotPermitted",
);
