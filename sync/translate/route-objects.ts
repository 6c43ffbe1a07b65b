import type { KubeConfigMap } from "./ca-bundles.js";
import type { BackendTLSPolicy } from "./gateway/backend-tls-objects.js";
import type { GRPCRoute } from "./gateway/grpc-route.js";
import type { Gateway, GatewayClass, HTTPRoute, Namespace, ReferenceGrant } from "./gateway/objects.js";
import type { TLSRoute } from "./gateway/tls-route.js";
import type { Ingress, IngressClass } from "./ingress/objects.js";
import type { KubeSecret } from "./tls-secrets.js";

/**
 * The route-relevant objects of one cluster besides its Services: Gateway API objects
 * (gateway.networking.k8s.io/v1), Namespaces (for listeners that select route namespaces by label), and
 * IngressClasses and Ingresses (networking.k8s.io/v1), as the informers or a manifest folder hold them.
 */
export interface RouteObjects {
  readonly gatewayClasses: readonly GatewayClass[];
  readonly gateways: readonly Gateway[];
  readonly httpRoutes: readonly HTTPRoute[];
  readonly grpcRoutes: readonly GRPCRoute[];
  readonly tlsRoutes: readonly TLSRoute[];
  readonly referenceGrants: readonly ReferenceGrant[];
  readonly namespaces: readonly Namespace[];
  readonly ingressClasses: readonly IngressClass[];
  readonly ingresses: readonly Ingress[];
  /** `kubernetes.io/tls` Secrets, for HTTPS listeners' certificateRefs. */
  readonly secrets: readonly KubeSecret[];
  /** ConfigMaps holding a CA bundle (`ca.crt`), for Gateways' tls.frontend caCertificateRefs and BackendTLSPolicies'. */
  readonly configMaps: readonly KubeConfigMap[];
  /** BackendTLSPolicies: TLS from the routers to the pods of the Services they target. */
  readonly backendTlsPolicies: readonly BackendTLSPolicy[];
}

/** Route objects of every kind, none yet: fresh lists a reader may fill. */
export function emptyRouteObjects(): { -readonly [K in keyof RouteObjects]: RouteObjects[K][number][] } {
  return {
    gatewayClasses: [],
    gateways: [],
    httpRoutes: [],
    grpcRoutes: [],
    tlsRoutes: [],
    referenceGrants: [],
    namespaces: [],
    ingressClasses: [],
    ingresses: [],
    secrets: [],
    configMaps: [],
    backendTlsPolicies: [],
  };
}

export const NO_ROUTE_OBJECTS: RouteObjects = emptyRouteObjects();
