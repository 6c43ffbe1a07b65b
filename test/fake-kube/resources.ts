/** The resources the fake API server serves, and how their REST paths look (Kubernetes API conventions). */
export type FakeKind =
  | "Service"
  | "EndpointSlice"
  | "Lease"
  | "Namespace"
  | "GatewayClass"
  | "Gateway"
  | "HTTPRoute"
  | "GRPCRoute"
  | "TLSRoute"
  | "ReferenceGrant"
  | "IngressClass"
  | "Ingress"
  | "Secret"
  | "BackendTLSPolicy"
  | "ConfigMap"
  | "ServiceAccount"
  | "Role"
  | "RoleBinding"
  | "ClusterRole"
  | "ClusterRoleBinding"
  | "Deployment"
  | "PodDisruptionBudget";

export interface ResourceInfo {
  readonly kind: FakeKind;
  readonly apiVersion: string;
  readonly plural: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  /** Served with a `status` subresource (PUT .../{name}/status changes the status alone). */
  readonly status: boolean;
}

const info = (
  kind: FakeKind,
  apiVersion: string,
  plural: string,
  namespaced: boolean,
  status = false,
): ResourceInfo => ({ kind, apiVersion, plural, listKind: `${kind}List`, namespaced, status });

const RBAC_API_VERSION = "rbac.authorization.k8s.io/v1";

export const RESOURCES: Readonly<Record<FakeKind, ResourceInfo>> = {
  Service: info("Service", "v1", "services", true),
  EndpointSlice: info("EndpointSlice", "discovery.k8s.io/v1", "endpointslices", true),
  Lease: info("Lease", "coordination.k8s.io/v1", "leases", true),
  Namespace: info("Namespace", "v1", "namespaces", false),
  GatewayClass: info("GatewayClass", "gateway.networking.k8s.io/v1", "gatewayclasses", false, true),
  Gateway: info("Gateway", "gateway.networking.k8s.io/v1", "gateways", true, true),
  HTTPRoute: info("HTTPRoute", "gateway.networking.k8s.io/v1", "httproutes", true, true),
  GRPCRoute: info("GRPCRoute", "gateway.networking.k8s.io/v1", "grpcroutes", true, true),
  TLSRoute: info("TLSRoute", "gateway.networking.k8s.io/v1", "tlsroutes", true, true),
  ReferenceGrant: info("ReferenceGrant", "gateway.networking.k8s.io/v1", "referencegrants", true),
  IngressClass: info("IngressClass", "networking.k8s.io/v1", "ingressclasses", false),
  Ingress: info("Ingress", "networking.k8s.io/v1", "ingresses", true, true),
  // TLS Secrets for HTTPS listeners' certificateRefs; listed and watched by `type` as the sync asks.
  Secret: info("Secret", "v1", "secrets", true),
  BackendTLSPolicy: info(
    "BackendTLSPolicy",
    "gateway.networking.k8s.io/v1",
    "backendtlspolicies",
    true,
    true,
  ),
  ConfigMap: info("ConfigMap", "v1", "configmaps", true),
  // Kept for RBAC (rbac.ts evaluates the Roles and bindings) and for deploy/'s manifests; no controller acts on
  // them, as none runs next to an envtest apiserver either.
  ServiceAccount: info("ServiceAccount", "v1", "serviceaccounts", true),
  Role: info("Role", RBAC_API_VERSION, "roles", true),
  RoleBinding: info("RoleBinding", RBAC_API_VERSION, "rolebindings", true),
  ClusterRole: info("ClusterRole", RBAC_API_VERSION, "clusterroles", false),
  ClusterRoleBinding: info("ClusterRoleBinding", RBAC_API_VERSION, "clusterrolebindings", false),
  Deployment: info("Deployment", "apps/v1", "deployments", true, true),
  PodDisruptionBudget: info("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", true, true),
};

/** The Gateway API's group: a fake started without it answers 404 there, as a cluster without its CRDs. */
export const GATEWAY_API_VERSION = "gateway.networking.k8s.io/v1";

/** What a request path addresses: a collection (all namespaces or one) or a single object, or its status. */
export interface ResourcePath {
  readonly kind: FakeKind;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource?: "status" | undefined;
}

/** The REST path of one object of `kind` (the inverse of parseResourcePath), or of its subresource. */
export function objectPath(
  kind: FakeKind,
  namespace: string | undefined,
  name: string,
  subresource?: string,
) {
  const resource = RESOURCES[kind];
  const root = resource.apiVersion.includes("/")
    ? `/apis/${resource.apiVersion}`
    : `/api/${resource.apiVersion}`;
  const scope = resource.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? "default")}` : "";
  const object = `${root}${scope}/${resource.plural}/${encodeURIComponent(name)}`;
  return subresource === undefined ? object : `${object}/${subresource}`;
}

/** The kind a kubectl-style name stands for: the kind, lower-cased or not, or its plural. */
export function kindNamed(name: string): FakeKind | undefined {
  const wanted = name.toLowerCase();
  return Object.values(RESOURCES).find(
    (resource) => resource.kind.toLowerCase() === wanted || resource.plural === wanted,
  )?.kind;
}

const PATH =
  /^\/(?:api\/v1|apis\/([a-z0-9.-]+\/v1))(?:\/namespaces\/([^/]+)(?=\/))?\/([a-z]+)(?:\/([^/]+))?(?:\/(status))?$/;

export function parseResourcePath(pathname: string): ResourcePath | undefined {
  const match = PATH.exec(pathname);
  if (!match) return parseNamespacePath(pathname);
  const [, groupVersion = "v1", namespace, plural, name, subresource] = match;
  const found = Object.values(RESOURCES).find(
    (resource) => resource.plural === plural && resource.apiVersion === groupVersion,
  );
  if (!found) return undefined;
  if (!found.namespaced && namespace !== undefined) return undefined;
  if (subresource !== undefined && (!found.status || name === undefined)) return undefined;
  return {
    kind: found.kind,
    namespace: decode(namespace),
    name: decode(name),
    ...(subresource ? { subresource: "status" as const } : {}),
  };
}

/** `/api/v1/namespaces` and `/api/v1/namespaces/{name}`: Namespaces are themselves under that segment. */
function parseNamespacePath(pathname: string): ResourcePath | undefined {
  const match = /^\/api\/v1\/namespaces(?:\/([^/]+))?$/.exec(pathname);
  return match ? { kind: "Namespace", namespace: undefined, name: decode(match[1]) } : undefined;
}

function decode(segment: string | undefined): string | undefined {
  return segment === undefined ? undefined : decodeURIComponent(segment);
}
