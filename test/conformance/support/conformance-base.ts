import type { EchoBackend } from "../../e2e/support/echo-backends.js";
import { sliceObject } from "../../fake-kube/fixtures.js";
import type { ApplyInput } from "../../fake-kube/store.js";

/**
 * The shared world every official conformance test starts from, written after the suite's base manifests
 * (gateway-api v1.6.1 conformance/base): our GatewayClass, the three namespaces, the Gateways
 * `same-namespace` (routes of its own namespace), `all-namespaces` and `backend-namespaces` (namespaces
 * labelled gateway-conformance=backend), each one HTTP listener on port 80, and the backend Services on port
 * 8080, each backed here by one loopback echo backend.
 */
export const INFRA = "gateway-conformance-infra";
export const APP = "gateway-conformance-app-backend";
export const WEB = "gateway-conformance-web-backend";
export const GATEWAY_API = "gateway.networking.k8s.io/v1";

export const BACKEND_SERVICES = [
  { namespace: INFRA, name: "infra-backend-v1" },
  { namespace: INFRA, name: "infra-backend-v2" },
  { namespace: INFRA, name: "infra-backend-v3" },
  { namespace: APP, name: "app-backend-v1" },
  { namespace: APP, name: "app-backend-v2" },
  { namespace: WEB, name: "web-backend" },
] as const;

export function gatewayObject(name: string, listeners: readonly Record<string, unknown>[]): ApplyInput {
  return {
    apiVersion: GATEWAY_API,
    kind: "Gateway",
    metadata: { name, namespace: INFRA, generation: 1 },
    spec: { gatewayClassName: "edgeslice", listeners },
  };
}

export function httpListener(name: string, port: number, extra: Record<string, unknown> = {}) {
  return { name, port, protocol: "HTTP", ...extra };
}

export function baseObjects(): ApplyInput[] {
  const namespace = (name: string, labels: Record<string, string> = {}): ApplyInput => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "kubernetes.io/metadata.name": name, ...labels } },
  });
  return [
    namespace(INFRA),
    namespace(APP, { "gateway-conformance": "backend" }),
    namespace(WEB, { "gateway-conformance": "backend" }),
    {
      apiVersion: GATEWAY_API,
      kind: "GatewayClass",
      metadata: { name: "edgeslice", generation: 1 },
      spec: { controllerName: "edgeslice.io/gateway-controller" },
    },
    gatewayObject("same-namespace", [
      httpListener("http", 80, { allowedRoutes: { namespaces: { from: "Same" } } }),
    ]),
    gatewayObject("all-namespaces", [
      httpListener("http", 80, { allowedRoutes: { namespaces: { from: "All" } } }),
    ]),
    gatewayObject("backend-namespaces", [
      httpListener("http", 80, {
        allowedRoutes: {
          namespaces: { from: "Selector", selector: { matchLabels: { "gateway-conformance": "backend" } } },
        },
      }),
    ]),
  ];
}

/** Each backend Service on port 8080 and its EndpointSlice at its echo backend (by `namespace/name`). */
export function serviceObjects(backends: ReadonlyMap<string, EchoBackend>): ApplyInput[] {
  return BACKEND_SERVICES.flatMap(({ namespace, name }) => {
    const backend = backends.get(`${namespace}/${name}`);
    if (!backend) throw new Error(`no echo backend for ${namespace}/${name}`);
    return [
      {
        kind: "Service",
        metadata: { name, namespace },
        spec: { type: "ClusterIP", ports: [{ name: "http", port: 8080, protocol: "TCP", targetPort: 3000 }] },
      },
      sliceObject(namespace, `${name}-1`, name, [backend.ip], { port: backend.port }),
    ];
  });
}

/** An HTTPRoute of `namespace` (default the infra namespace) with this spec. */
export function httpRouteObject(
  name: string,
  spec: Record<string, unknown>,
  namespace: string = INFRA,
): ApplyInput {
  return { apiVersion: GATEWAY_API, kind: "HTTPRoute", metadata: { name, namespace, generation: 1 }, spec };
}

/** A backendRef to a conformance Service on port 8080. */
export function backend(name: string, extra: Record<string, unknown> = {}) {
  return { name, port: 8080, ...extra };
}

/** A PathPrefix match. */
export function prefixMatch(value: string, extra: Record<string, unknown> = {}) {
  return { path: { type: "PathPrefix", value }, ...extra };
}
