import { parseAllDocuments } from "yaml";
import type { ApplyInput } from "../../fake-kube/store.js";

/**
 * The manifests an operator would apply for the Gateway API and Ingress end-to-end test, as YAML text (one
 * string per file), so the same text can go to a fake API server and to a `--from DIR` folder. Every
 * Service has one TCP port 80 named http and one EndpointSlice listing its loopback backend's port.
 */

/** Backends of namespace `shop` (the Gateway's, the routes' and the Ingress's). */
export const SHOP_BACKENDS = [
  "stable",
  "canary",
  "prefix",
  "exact",
  "header",
  "method",
  "rewrite",
  "headers",
  "docs",
  "about",
  "blog",
  "fallback",
  "legacy",
] as const;
/** A Service in another namespace that an HTTPRoute of `shop` references without a ReferenceGrant. */
export const FOREIGN_BACKEND = { namespace: "other", name: "secret" } as const;

export function serviceManifests(namespace: string, name: string, port: number, hosts?: string): string {
  const annotations = hosts ? `\n  annotations:\n    edgeslice.io/hosts: ${hosts}` : "";
  return `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: ${namespace}${annotations}
spec:
  ports:
    - { name: http, port: 80, protocol: TCP, targetPort: http }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: ${name}-1
  namespace: ${namespace}
  labels: { kubernetes.io/service-name: ${name} }
addressType: IPv4
ports:
  - { name: http, port: ${port}, protocol: TCP }
endpoints:
  - addresses: ["127.0.0.1"]
    conditions: { ready: true, serving: true, terminating: false }
`;
}

const backendRef = (name: string, extra = "") => `{ name: ${name}, port: 80${extra} }`;

/** edgeslice's GatewayClass and the Gateway `shop/edge` (listener `http` for `*.gw.test`) the routes attach to. */
export const EDGE_GATEWAY = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: edgeslice }
spec: { controllerName: edgeslice.io/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: shop }
spec:
  gatewayClassName: edgeslice
  listeners:
    - { name: http, port: 80, protocol: HTTP, hostname: "*.gw.test" }
`;

export const GATEWAY_MANIFESTS = `${EDGE_GATEWAY}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: split, namespace: shop }
spec:
  parentRefs: [{ name: edge }]
  hostnames: [split.gw.test]
  rules:
    - backendRefs: [${backendRef("stable", ", weight: 90")}, ${backendRef("canary", ", weight: 10")}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: matches, namespace: shop }
spec:
  parentRefs: [{ name: edge }]
  hostnames: [matches.gw.test]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /app } }]
      backendRefs: [${backendRef("prefix")}]
    - matches: [{ path: { type: Exact, value: /app/exact } }]
      backendRefs: [${backendRef("exact")}]
    - matches: [{ path: { type: PathPrefix, value: /app }, headers: [{ name: X-Version, value: v2 }] }]
      backendRefs: [${backendRef("header")}]
    - matches: [{ path: { type: PathPrefix, value: /app }, method: POST }]
      backendRefs: [${backendRef("method")}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: filters, namespace: shop }
spec:
  parentRefs: [{ name: edge, sectionName: http }]
  hostnames: [filters.gw.test]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /old } }]
      filters:
        - type: RequestRedirect
          requestRedirect: { path: { type: ReplacePrefixMatch, replacePrefixMatch: /new }, statusCode: 301 }
    - matches: [{ path: { type: PathPrefix, value: /moved } }]
      filters:
        - type: RequestRedirect
          requestRedirect: { scheme: https, hostname: www.gw.test }
    - matches: [{ path: { type: PathPrefix, value: /v1 } }]
      filters:
        - type: URLRewrite
          urlRewrite: { path: { type: ReplacePrefixMatch, replacePrefixMatch: /v2 } }
      backendRefs: [${backendRef("rewrite")}]
    - matches: [{ path: { type: PathPrefix, value: /legacy-page } }]
      filters:
        - type: URLRewrite
          urlRewrite: { path: { type: ReplaceFullPath, replaceFullPath: /index.html } }
      backendRefs: [${backendRef("rewrite")}]
    - matches: [{ path: { type: PathPrefix, value: /rehost } }]
      filters:
        - type: URLRewrite
          urlRewrite: { hostname: internal.gw.test, path: { type: ReplacePrefixMatch, replacePrefixMatch: / } }
      backendRefs: [${backendRef("rewrite")}]
    - matches: [{ path: { type: PathPrefix, value: /headers } }]
      filters:
        - type: RequestHeaderModifier
          requestHeaderModifier:
            set: [{ name: X-Env, value: e2e }]
            add: [{ name: X-Added, value: "yes" }]
            remove: [X-Drop]
        - type: ResponseHeaderModifier
          responseHeaderModifier:
            set: [{ name: X-Served-By, value: edgeslice }]
            remove: [X-Backend-Internal]
      backendRefs: [${backendRef("headers")}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: cross, namespace: shop }
spec:
  parentRefs: [{ name: edge }]
  hostnames: [cross.gw.test]
  rules:
    - backendRefs: [{ name: ${FOREIGN_BACKEND.name}, namespace: ${FOREIGN_BACKEND.namespace}, port: 80 }]
`;

export const INGRESS_MANIFESTS = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: { name: edgeslice }
spec: { controller: edgeslice.io/ingress-controller }
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: site, namespace: shop }
spec:
  ingressClassName: edgeslice
  defaultBackend: { service: { name: fallback, port: { number: 80 } } }
  rules:
    - host: site.ing.test
      http:
        paths:
          - { path: /docs, pathType: Prefix, backend: { service: { name: docs, port: { name: http } } } }
          - { path: /about, pathType: Exact, backend: { service: { name: about, port: { number: 80 } } } }
          - path: /blog
            pathType: ImplementationSpecific
            backend: { service: { name: blog, port: { number: 80 } } }
`;

/** Every manifest file of the scenario: name → YAML text. `ports` gives each backend name its port. */
export function scenarioFiles(ports: ReadonlyMap<string, number>): Map<string, string> {
  const portOf = (name: string) => {
    const port = ports.get(name);
    if (port === undefined) throw new Error(`no backend ${name}`);
    return port;
  };
  const services = SHOP_BACKENDS.map((name) =>
    serviceManifests("shop", name, portOf(name), name === "legacy" ? "legacy.test" : undefined),
  );
  services.push(serviceManifests(FOREIGN_BACKEND.namespace, FOREIGN_BACKEND.name, portOf("secret")));
  return new Map([
    ["services.yaml", services.join("---\n")],
    ["gateway.yaml", GATEWAY_MANIFESTS],
    ["ingress.yaml", INGRESS_MANIFESTS],
  ]);
}

/** Each YAML document of `text` as an object the fake API server applies. */
export function manifestObjects(text: string): ApplyInput[] {
  const documents = parseAllDocuments(text);
  if (!Array.isArray(documents)) return [];
  return documents
    .map((document) => document.toJS() as ApplyInput | null)
    .filter((object): object is ApplyInput => object !== null);
}
