import { APP, GATEWAY_API, INFRA } from "./support/conformance-base.js";
import { passthroughListener } from "./support/tls-route-fixture.js";
import { describeUnresolvedTlsRoute } from "./support/tls-route-invalid-backend.js";

/** A ReferenceGrant of `namespace` from `from` to `to`, as the official test's seven near misses are. */
const grant = (
  name: string,
  namespace: string,
  from: Record<string, string>,
  to: Record<string, string>,
) => ({
  apiVersion: GATEWAY_API,
  kind: "ReferenceGrant",
  metadata: { name, namespace },
  spec: { from: [from], to: [to] },
});
const FROM = { group: "gateway.networking.k8s.io", kind: "TLSRoute", namespace: INFRA };
const TO = { group: "", kind: "Service", name: "tls-backend" };

/**
 * Conformance TLSRouteInvalidReferenceGrant: a TLSRoute whose backendRef is a Service of another namespace, with
 * ReferenceGrants that each miss by one field (their namespace, the from group, kind or namespace, the to group,
 * kind or name), is accepted with ResolvedRefs=False/RefNotPermitted.
 */
describeUnresolvedTlsRoute("TLSRouteInvalidReferenceGrant", {
  gateway: "gateway-tlsroute-referencegrant",
  route: "gateway-conformance-infra-test",
  hostname: "abc.example.com",
  listener: passthroughListener("tls", { hostname: "*.example.com" }),
  backendRef: { name: "tls-backend", namespace: APP, port: 443 },
  reason: "RefNotPermitted",
  more: [
    grant("reference-grant-wrong-namespace", INFRA, FROM, TO),
    grant("reference-grant-wrong-from-group", APP, { ...FROM, group: "not-the-group-youre-looking-for" }, TO),
    grant("reference-grant-wrong-from-kind", APP, { ...FROM, kind: "Gateway" }, TO),
    grant(
      "reference-grant-wrong-from-namespace",
      APP,
      { ...FROM, namespace: "not-the-namespace-youre-looking-for" },
      TO,
    ),
    grant("reference-grant-wrong-to-group", APP, FROM, { ...TO, group: "not-the-group-youre-looking-for" }),
    grant("reference-grant-wrong-to-kind", APP, FROM, { ...TO, kind: "Secret" }),
    grant("reference-grant-wrong-to-name", APP, FROM, { ...TO, name: "not-the-service-youre-looking-for" }),
  ],
  rejects: true,
});
