import type { Result } from "../../lib/result.js";
import {
  parseGateway,
  parseGatewayClass,
  parseHTTPRoute,
  parseNamespace,
  parseReferenceGrant,
} from "../translate/gateway/objects.js";
import { parseIngress, parseIngressClass } from "../translate/ingress/objects.js";
import {
  type KubeEndpointSlice,
  type KubeService,
  parseEndpointSlice,
  parseService,
} from "../translate/kube-objects.js";
import { emptyRouteObjects, type RouteObjects } from "../translate/route-objects.js";

/** The objects a manifest folder holds, by kind; each list in the folder's sorted file order. */
export interface ManifestObjects {
  readonly services: KubeService[];
  readonly slices: KubeEndpointSlice[];
  /** Gateway API objects, Namespaces, IngressClasses and Ingresses. */
  readonly routeObjects: { -readonly [K in keyof RouteObjects]: RouteObjects[K][number][] };
}

export function emptyManifestObjects(): ManifestObjects {
  return { services: [], slices: [], routeObjects: emptyRouteObjects() };
}

interface KindReader {
  /** apiVersions whose shape the parser describes; absent in the manifest is accepted too. */
  readonly apiVersions: readonly string[];
  /** Validates and keeps the object; the error when it does not validate. */
  readonly read: (
    object: unknown,
    into: ManifestObjects,
  ) => Result<{ name: string; namespace: string | undefined }>;
}

function reader<T extends { metadata: { name: string; namespace?: string | null | undefined } }>(
  apiVersions: readonly string[],
  parse: (object: unknown) => Result<T>,
  list: (into: ManifestObjects) => T[],
): KindReader {
  return {
    apiVersions,
    read: (object, into) => {
      const parsed = parse(object);
      if (!parsed.ok) return parsed;
      list(into).push(parsed.value);
      return {
        ok: true,
        value: { name: parsed.value.metadata.name, namespace: parsed.value.metadata.namespace ?? undefined },
      };
    },
  };
}

const GATEWAY = "gateway.networking.k8s.io";
/**
 * The Gateway API's standard CRDs (v1.6.1) serve these kinds as v1 and v1beta1 with one schema (only the
 * descriptions differ), so a manifest written for v1beta1 is the same object an API server would store.
 */
const GATEWAY_VERSIONS = [`${GATEWAY}/v1`, `${GATEWAY}/v1beta1`];

/** Every kind `--from DIR` reads; other kinds are ignored. */
export const MANIFEST_KINDS: Readonly<Record<string, KindReader>> = {
  Service: reader(["v1"], parseService, (into) => into.services),
  EndpointSlice: reader(["discovery.k8s.io/v1"], parseEndpointSlice, (into) => into.slices),
  GatewayClass: reader(GATEWAY_VERSIONS, parseGatewayClass, (into) => into.routeObjects.gatewayClasses),
  Gateway: reader(GATEWAY_VERSIONS, parseGateway, (into) => into.routeObjects.gateways),
  HTTPRoute: reader(GATEWAY_VERSIONS, parseHTTPRoute, (into) => into.routeObjects.httpRoutes),
  ReferenceGrant: reader(GATEWAY_VERSIONS, parseReferenceGrant, (into) => into.routeObjects.referenceGrants),
  Namespace: reader(["v1"], parseNamespace, (into) => into.routeObjects.namespaces),
  IngressClass: reader(
    ["networking.k8s.io/v1"],
    parseIngressClass,
    (into) => into.routeObjects.ingressClasses,
  ),
  Ingress: reader(["networking.k8s.io/v1"], parseIngress, (into) => into.routeObjects.ingresses),
};

/** Kinds without a namespace: a repeated name is a duplicate whatever namespace a manifest gives. */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  "GatewayClass",
  "Namespace",
  "IngressClass",
]);
