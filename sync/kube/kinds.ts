import type { Result } from "../../lib/result.js";
import { holdsCaBundle, parseConfigMap } from "../translate/ca-bundles.js";
import { parseBackendTLSPolicy } from "../translate/gateway/backend-tls-objects.js";
import { parseGRPCRoute } from "../translate/gateway/grpc-route.js";
import {
  parseGateway,
  parseGatewayClass,
  parseHTTPRoute,
  parseNamespace,
  parseReferenceGrant,
} from "../translate/gateway/objects.js";
import { parseTLSRoute } from "../translate/gateway/tls-route.js";
import { parseIngress, parseIngressClass } from "../translate/ingress/objects.js";
import { parseEndpointSlice, parseService } from "../translate/kube-objects.js";
import type { RouteObjects } from "../translate/route-objects.js";
import { parseSecret } from "../translate/tls-secrets.js";

/** One kind the sync reads: where the API serves it and how an object of it is validated. */
export interface KindSpec {
  readonly group: string;
  readonly version: string;
  /** The plural resource name in API paths and RBAC rules. */
  readonly resource: string;
  readonly namespaced: boolean;
  /** apiVersions a manifest of `--from DIR` may carry (one given or none is accepted too). */
  readonly manifestApiVersions: readonly string[];
  readonly parse: (raw: unknown) => Result<object>;
  /** A field selector every list and watch of the kind carries, so the API server sends nothing else. */
  readonly fieldSelector?: string;
  /**
   * Set for a kind the sync's RBAC may not grant (one added after deploy/ first shipped, or used by one feature
   * only): a refused list reads it as none, retried, and warns with this line (what is lost, what to grant), so
   * a sync whose Role predates the kind keeps serving everything else. Unset, a refusal stops the reflector,
   * except a cluster-scoped kind under WATCH_NAMESPACES (optional-kinds.ts).
   */
  readonly whenRefused?: string;
  /**
   * Whether an object of the kind is kept at all (default: every one). One that is not is treated as absent:
   * never cached, and its changes change nothing (ConfigMaps without a CA bundle).
   */
  readonly relevant?: (raw: unknown) => boolean;
}

/** The warning of a kind read as none while RBAC refuses it: `Kinds are not readable: <lost>; retrying (grant ...)`. */
function refusedLine(kinds: string, lost: string, grant: string): string {
  return `${kinds} are not readable: ${lost}; retrying (grant ${grant}, as deploy/ does)`;
}

const GATEWAY_GROUP = "gateway.networking.k8s.io";
/**
 * The Gateway API's standard CRDs serve these kinds as v1 and v1beta1 with one schema (only the descriptions
 * differ), so a manifest written for v1beta1 is the same object an API server would store.
 */
const GATEWAY_MANIFEST_VERSIONS = [`${GATEWAY_GROUP}/v1`, `${GATEWAY_GROUP}/v1beta1`];

function gatewayKind(resource: string, namespaced: boolean, parse: KindSpec["parse"]): KindSpec {
  return {
    group: GATEWAY_GROUP,
    version: "v1",
    resource,
    namespaced,
    manifestApiVersions: GATEWAY_MANIFEST_VERSIONS,
    parse,
  };
}

/** Every kind the sync reads, from the API server or a manifest folder: the one table of them. */
export const KINDS = {
  Service: {
    group: "",
    version: "v1",
    resource: "services",
    namespaced: true,
    manifestApiVersions: ["v1"],
    parse: parseService,
  },
  EndpointSlice: {
    group: "discovery.k8s.io",
    version: "v1",
    resource: "endpointslices",
    namespaced: true,
    manifestApiVersions: ["discovery.k8s.io/v1"],
    parse: parseEndpointSlice,
  },
  GatewayClass: gatewayKind("gatewayclasses", false, parseGatewayClass),
  Gateway: gatewayKind("gateways", true, parseGateway),
  HTTPRoute: gatewayKind("httproutes", true, parseHTTPRoute),
  // GRPCRoute is served as v1 and v1alpha2 with one schema (the experimental channel keeps the older name).
  GRPCRoute: {
    ...gatewayKind("grpcroutes", true, parseGRPCRoute),
    manifestApiVersions: [`${GATEWAY_GROUP}/v1`, `${GATEWAY_GROUP}/v1alpha2`],
    whenRefused: refusedLine(
      "GRPCRoutes",
      "none is published",
      "get, list, watch on grpcroutes and update on grpcroutes/status",
    ),
  },
  // TLSRoute is v1 in the standard channel since v1.5; older experimental CRDs named it v1alpha2/v1alpha3
  // with the fields read here alike.
  TLSRoute: {
    ...gatewayKind("tlsroutes", true, parseTLSRoute),
    manifestApiVersions: [`${GATEWAY_GROUP}/v1`, `${GATEWAY_GROUP}/v1alpha3`, `${GATEWAY_GROUP}/v1alpha2`],
    whenRefused: refusedLine(
      "TLSRoutes",
      "none is published",
      "get, list, watch on tlsroutes and update on tlsroutes/status",
    ),
  },
  ReferenceGrant: gatewayKind("referencegrants", true, parseReferenceGrant),
  Namespace: {
    group: "",
    version: "v1",
    resource: "namespaces",
    namespaced: false,
    manifestApiVersions: ["v1"],
    parse: parseNamespace,
  },
  IngressClass: {
    group: "networking.k8s.io",
    version: "v1",
    resource: "ingressclasses",
    namespaced: false,
    manifestApiVersions: ["networking.k8s.io/v1"],
    parse: parseIngressClass,
  },
  Ingress: {
    group: "networking.k8s.io",
    version: "v1",
    resource: "ingresses",
    namespaced: true,
    manifestApiVersions: ["networking.k8s.io/v1"],
    parse: parseIngress,
  },
  // Only TLS Secrets ever reach the sync (`type` is a field the API server selects Secrets by); the
  // translation uses those a listener of ours references (docs/design.md, sync rule 6).
  Secret: {
    group: "",
    version: "v1",
    resource: "secrets",
    namespaced: true,
    manifestApiVersions: ["v1"],
    parse: parseSecret,
    fieldSelector: "type=kubernetes.io/tls",
    // Read only for HTTPS listeners: a sync whose RBAC predates them keeps serving everything else.
    whenRefused: refusedLine(
      "Secrets",
      "HTTPS listeners' certificateRefs resolve to nothing",
      "get, list, watch on secrets",
    ),
  },
  BackendTLSPolicy: {
    ...gatewayKind("backendtlspolicies", true, parseBackendTLSPolicy),
    whenRefused: refusedLine(
      "BackendTLSPolicies",
      "the router opens no TLS to pods",
      "get, list, watch on backendtlspolicies and update on backendtlspolicies/status",
    ),
  },
  // CA bundles (`ca.crt`) for Gateways' tls.frontend caCertificateRefs and BackendTLSPolicies'. Nothing selects
  // ConfigMaps by key on the API server, so the others are dropped as they arrive (`relevant`): never cached,
  // never recomputed for.
  ConfigMap: {
    group: "",
    version: "v1",
    resource: "configmaps",
    namespaced: true,
    manifestApiVersions: ["v1"],
    parse: parseConfigMap,
    relevant: holdsCaBundle,
    whenRefused: refusedLine(
      "ConfigMaps",
      "Gateways' client certificate validation and BackendTLSPolicies resolve to no CA",
      "get, list, watch on configmaps",
    ),
  },
} as const satisfies Record<string, KindSpec>;

export type Kind = keyof typeof KINDS;

/** The route-relevant kinds besides Services, and the list of RouteObjects each fills. */
export const ROUTE_OBJECT_LISTS = {
  GatewayClass: "gatewayClasses",
  Gateway: "gateways",
  HTTPRoute: "httpRoutes",
  GRPCRoute: "grpcRoutes",
  TLSRoute: "tlsRoutes",
  ReferenceGrant: "referenceGrants",
  Namespace: "namespaces",
  IngressClass: "ingressClasses",
  Ingress: "ingresses",
  Secret: "secrets",
  BackendTLSPolicy: "backendTlsPolicies",
  ConfigMap: "configMaps",
} as const satisfies Partial<Record<Kind, keyof RouteObjects>>;

export type RouteKind = keyof typeof ROUTE_OBJECT_LISTS;

export const ROUTE_KINDS = Object.keys(ROUTE_OBJECT_LISTS) as readonly RouteKind[];

export function isKind(kind: string): kind is Kind {
  return Object.hasOwn(KINDS, kind);
}

/** The collection path of `kind`, in `namespace` or cluster-wide (e.g. /apis/networking.k8s.io/v1/ingresses). */
export function collectionPath(kind: Kind, namespace?: string): string {
  const { group, version, resource } = KINDS[kind];
  const base = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
  const where = namespace === undefined ? "" : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${base}${where}/${resource}`;
}

/** collectionPath with the kind's field selector, if it has one: what its reflector lists and watches. */
export function watchedPath(kind: Kind, namespace?: string): string {
  const spec: KindSpec = KINDS[kind];
  const path = collectionPath(kind, namespace);
  return spec.fieldSelector === undefined
    ? path
    : `${path}?fieldSelector=${encodeURIComponent(spec.fieldSelector)}`;
}
