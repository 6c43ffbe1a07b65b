/**
 * Gateway API and Ingress objects for the control-plane cases, as a user applies them. Backends are Services of
 * objects.ts (port 80 named http, slices on 10.0.0.0/8 that nothing ever sends traffic to).
 */
export const GATEWAY_CONTROLLER = "edgeslice.io/gateway-controller";
export const INGRESS_CONTROLLER = "edgeslice.io/ingress-controller";
const GATEWAY_API = "gateway.networking.k8s.io/v1";

type Json = Record<string, unknown>;

export function gatewayClassObject(name: string, controllerName = GATEWAY_CONTROLLER): object {
  return { apiVersion: GATEWAY_API, kind: "GatewayClass", metadata: { name }, spec: { controllerName } };
}

/**
 * HTTP listeners on port 80, one per `name: hostname` (undefined: no hostname), taking routes from the
 * namespaces `allowedNamespaces` says (Gateway API RouteNamespaces; every namespace by default).
 */
export function gatewayObject(
  namespace: string,
  name: string,
  className: string,
  listeners: Readonly<Record<string, string | undefined>>,
  allowedNamespaces: Json = { from: "All" },
): object {
  return {
    apiVersion: GATEWAY_API,
    kind: "Gateway",
    metadata: { name, namespace },
    spec: {
      gatewayClassName: className,
      listeners: Object.entries(listeners).map(([listener, hostname]) => ({
        name: listener,
        port: 80,
        protocol: "HTTP",
        ...(hostname === undefined ? {} : { hostname }),
        allowedRoutes: { namespaces: allowedNamespaces },
      })),
    },
  };
}

export function httpRouteObject(
  namespace: string,
  name: string,
  spec: { parentRefs: Json[]; hostnames?: string[]; rules: Json[] },
): object {
  return { apiVersion: GATEWAY_API, kind: "HTTPRoute", metadata: { name, namespace }, spec };
}

export function parentRef(namespace: string, name: string): Json {
  return { group: "gateway.networking.k8s.io", kind: "Gateway", namespace, name };
}

export function backendRef(name: string, weight?: number, namespace?: string): Json {
  return {
    name,
    port: 80,
    ...(namespace === undefined ? {} : { namespace }),
    ...(weight === undefined ? {} : { weight }),
  };
}

/** Lets HTTPRoutes of `fromNamespace` refer to Services of `namespace`. */
export function referenceGrantObject(namespace: string, name: string, fromNamespace: string): object {
  return {
    apiVersion: GATEWAY_API,
    kind: "ReferenceGrant",
    metadata: { name, namespace },
    spec: {
      from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: fromNamespace }],
      to: [{ group: "", kind: "Service" }],
    },
  };
}

export function ingressClassObject(name: string, controller: string, isDefault = false): object {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "IngressClass",
    metadata: {
      name,
      ...(isDefault ? { annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } } : {}),
    },
    spec: { controller },
  };
}

export function ingressBackend(service: string): Json {
  return { service: { name: service, port: { number: 80 } } };
}

export function ingressObject(
  namespace: string,
  name: string,
  spec: { ingressClassName?: string; defaultBackend?: Json; rules?: Json[] },
): object {
  return { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { name, namespace }, spec };
}
