import { describeUnresolvedRefConformance } from "./support/unresolved-ref.js";

/** Conformance HTTPRouteInvalidBackendRefUnknownKind: a backendRef of a kind edgeslice does not serve. */
describeUnresolvedRefConformance(
  "HTTPRouteInvalidBackendRefUnknownKind",
  "invalid-backend-ref-unknown-kind",
  { group: "unknown.example.com", kind: "NonExistent", name: "infra-backend-v1", port: 8080 },
  "InvalidKind",
);
