import { describeUnresolvedRefConformance } from "./support/unresolved-ref.js";

/** Conformance HTTPRouteInvalidNonExistentBackendRef: a backendRef to a Service that does not exist. */
describeUnresolvedRefConformance(
  "HTTPRouteInvalidNonExistentBackendRef",
  "invalid-nonexistent-backend-ref",
  { name: "nonexistent", port: 8080 },
  "BackendNotFound",
);
