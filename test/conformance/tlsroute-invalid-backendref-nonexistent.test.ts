import { describeUnresolvedTlsRoute } from "./support/tls-route-invalid-backend.js";

/**
 * Conformance TLSRouteInvalidBackendRefNonexistent: a TLSRoute whose only backendRef names a Service that does
 * not exist is accepted with ResolvedRefs=False/BackendNotFound, and a connection for its hostname is rejected.
 */
describeUnresolvedTlsRoute("TLSRouteInvalidBackendRefNonexistent", {
  gateway: "gateway-tlsroute-invalid-backend-ref-nonexistent",
  route: "invalid-backend-ref-nonexistent",
  hostname: "example.com",
  backendRef: { name: "nonexistent", namespace: "gateway-conformance-infra", port: 443 },
  reason: "BackendNotFound",
  rejects: true,
});
