import { backend, httpRouteObject, WEB } from "./support/conformance-base.js";
import { describeRoutingConformance } from "./support/routing-cases.js";

/**
 * Conformance HTTPRouteReferenceGrant: a route of the infra namespace sends to web-backend in another
 * namespace, which a ReferenceGrant there allows for that one Service.
 */
describeRoutingConformance("HTTPRouteReferenceGrant", {
  objects: [
    {
      apiVersion: "gateway.networking.k8s.io/v1beta1",
      kind: "ReferenceGrant",
      metadata: { name: "reference-grant", namespace: WEB },
      spec: {
        from: [
          { group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "gateway-conformance-infra" },
        ],
        to: [{ group: "", kind: "Service", name: "web-backend" }],
      },
    },
    httpRouteObject("reference-grant", {
      parentRefs: [{ name: "same-namespace" }],
      rules: [{ backendRefs: [backend("web-backend", { namespace: WEB })] }],
    }),
  ],
  routes: [{ name: "reference-grant" }],
  cases: [{ path: "/", backend: `${WEB}/web-backend` }],
});
