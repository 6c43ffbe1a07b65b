import { describeUnresolvedTlsRoute } from "./support/tls-route-invalid-backend.js";

/**
 * Conformance TLSRouteInvalidBackendRefUnknownKind: a TLSRoute whose only backendRef is of a kind no one
 * serves is accepted with ResolvedRefs=False/InvalidKind, and a connection for its hostname is rejected.
 */
describeUnresolvedTlsRoute("TLSRouteInvalidBackendRefUnknownKind", {
  gateway: "gateway-tlsroute-invalid-backend-ref-unknown-kind",
  route: "invalid-backend-ref-unknown-kind",
  hostname: "example.com",
  backendRef: { group: "unknownkind.example.com", kind: "NonExistent", name: "tls-backend", port: 443 },
  reason: "InvalidKind",
  rejects: true,
});
