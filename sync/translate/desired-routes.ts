import { byCodeUnits } from "../../lib/code-unit-order.js";
import type { RouteRecord } from "../../store/routes.js";
import {
  type AnnotationRouteResult,
  annotationCandidates,
  type InvalidAnnotations,
} from "./annotation-route.js";
import { type GatewayAddressSettings, NO_GATEWAY_ADDRESSES } from "./gateway/addresses.js";
import { type BackendTlsTranslation, translateBackendTlsPolicies } from "./gateway/backend-tls-policies.js";
import { type Condition, condition, type RouteParentStatus } from "./gateway/conditions.js";
import { type GatewayApiTranslation, type Problem, translateGatewayApi } from "./gateway/translate.js";
import { type HostClaims, mayClaim } from "./host-claims.js";
import {
  type IngressTranslation,
  type LoadBalancerIngress,
  translateIngresses,
} from "./ingress/translate.js";
import type { KubeService } from "./kube-objects.js";
import { type RouteConflict, routeConflicts } from "./route-conflicts.js";
import { NO_ROUTE_OBJECTS, type RouteObjects } from "./route-objects.js";

export const GATEWAY_CONTROLLER = "edgeslice.io/gateway-controller";
export const INGRESS_CONTROLLER = "edgeslice.io/ingress-controller";
/**
 * Our own condition on each of our HTTPRoute parents (a domain-prefixed type, as metav1.Condition allows for
 * implementation-specific ones): True when the route serves every hostname and match it asks for; False with
 * NotAllowedByHostClaims (HOST_CLAIMS refused a hostname) or ShadowedByOlderRoute (another route of the
 * cluster asks for the same host and request and wins by precedence).
 */
export const HOST_OWNERSHIP_CONDITION = "edgeslice.io/HostOwnership";

export interface RouteSettings {
  readonly gatewayController: string;
  readonly ingressController: string;
  /** HOST_CLAIMS; undefined: anyone may claim anything. */
  readonly hostClaims: HostClaims | undefined;
  /** Written into our Ingresses' status.loadBalancer.ingress; empty by default. */
  readonly loadBalancer: readonly LoadBalancerIngress[];
  /** GATEWAY_ADDRESSES: written into our Gateways' status.addresses; none by default. */
  readonly gatewayAddresses: GatewayAddressSettings;
}

export const DEFAULT_ROUTE_SETTINGS: RouteSettings = {
  gatewayController: GATEWAY_CONTROLLER,
  ingressController: INGRESS_CONTROLLER,
  hostClaims: undefined,
  loadBalancer: [],
  gatewayAddresses: NO_GATEWAY_ADDRESSES,
};

export interface DesiredRoutesInput {
  readonly services: readonly KubeService[];
  readonly objects?: RouteObjects | undefined;
  readonly settings: RouteSettings;
  /** The annotation route of one Service; annotationRouteOf unless the caller memoises it. */
  readonly annotationRoute?: (service: KubeService) => AnnotationRouteResult;
  /** The stored route of id, kept while the annotations of its Service are invalid. */
  readonly kept?: (id: string) => RouteRecord | undefined;
}

export interface DesiredRoutes {
  /** Every route to publish, by id (in id order). */
  readonly routes: ReadonlyMap<string, RouteRecord>;
  /** Service port numbers the routes reference through valid backends, by `ns/name`. */
  readonly ports: ReadonlyMap<string, ReadonlySet<number>>;
  readonly invalidAnnotations: readonly InvalidAnnotations[];
  /** Hostnames HOST_CLAIMS refused, by route (`*` for a route without hostnames). */
  readonly refusedClaims: readonly { readonly route: string; readonly host: string }[];
  readonly conflicts: readonly RouteConflict[];
  readonly problems: readonly Problem[];
  readonly statuses: GatewayApiTranslation["statuses"] &
    IngressTranslation["statuses"] & { readonly backendTlsPolicies?: BackendTlsTranslation["statuses"] };
  /** The certificates HTTPS listeners of our Gateways serve, by Secret id. */
  readonly certificates: GatewayApiTranslation["certificates"];
  /** The client certificate validations HTTPS listeners of our Gateways ask for, per Gateway and port. */
  readonly clientValidations: GatewayApiTranslation["clientValidations"];
  /**
   * BackendTLSPolicies in force: their records, and per Service the ports they apply to; our Gateways' backend
   * client certificates (sealed when written: sync/publish/backend-tls-writes.ts).
   */
  readonly backendTls: Pick<BackendTlsTranslation, "records" | "ports"> & {
    readonly clients?: GatewayApiTranslation["backendClientCertificates"];
  };
}

/**
 * Everything one cluster routes, from its cache: the annotation route of every exposed Service, the
 * HTTPRoutes attached to our Gateways and the rules of our Ingresses (pure translations, recomputed whole),
 * HOST_CLAIMS applied, conflicts found, and the status each Gateway API object and Ingress should carry.
 */
export function desiredRoutes(input: DesiredRoutesInput): DesiredRoutes {
  const objects = input.objects ?? NO_ROUTE_OBJECTS;
  const { settings } = input;
  const { candidates, invalidAnnotations } = annotationCandidates(input);
  const gateway = translateGatewayApi({
    controllerName: settings.gatewayController,
    gatewayClasses: objects.gatewayClasses,
    gateways: objects.gateways,
    httpRoutes: objects.httpRoutes,
    grpcRoutes: objects.grpcRoutes,
    tlsRoutes: objects.tlsRoutes,
    referenceGrants: objects.referenceGrants,
    namespaces: objects.namespaces,
    secrets: objects.secrets,
    configMaps: objects.configMaps,
    services: input.services,
    addresses: settings.gatewayAddresses,
  });
  const ingress = translateIngresses({
    controllerName: settings.ingressController,
    ingressClasses: objects.ingressClasses,
    ingresses: objects.ingresses,
    services: input.services,
    loadBalancer: settings.loadBalancer,
  });
  candidates.push(...gateway.routes, ...ingress.routes);

  const { routes, refusedClaims } = claimedRoutes(candidates, settings.hostClaims);
  const conflicts = routeConflicts(routes.values());
  const backendTls = translateBackendTlsPolicies({
    controllerName: settings.gatewayController,
    policies: objects.backendTlsPolicies,
    configMaps: objects.configMaps,
    services: input.services,
    routes: routes.values(),
  });
  return {
    routes,
    ports: referencedPorts(routes.values()),
    invalidAnnotations,
    refusedClaims,
    conflicts,
    problems: [...gateway.problems, ...ingress.problems, ...backendTls.problems],
    certificates: gateway.certificates,
    clientValidations: gateway.clientValidations,
    backendTls: {
      records: backendTls.records,
      ports: backendTls.ports,
      clients: gateway.backendClientCertificates,
    },
    statuses: {
      ...gateway.statuses,
      httpRoutes: withOwnership(gateway.statuses.httpRoutes, refusedClaims, conflicts),
      grpcRoutes: withOwnership(
        gateway.statuses.grpcRoutes ?? new Map(),
        refusedClaims,
        conflicts,
        "grpcroute",
      ),
      tlsRoutes: withOwnership(gateway.statuses.tlsRoutes ?? new Map(), refusedClaims, conflicts, "tlsroute"),
      ingresses: ingress.statuses.ingresses,
      backendTlsPolicies: backendTls.statuses,
    },
  };
}

/** Every candidate held to the host claims, in id order so that the refusals are listed the same every pass. */
function claimedRoutes(
  candidates: readonly RouteRecord[],
  hostClaims: DesiredRoutesInput["settings"]["hostClaims"],
): { routes: Map<string, RouteRecord>; refusedClaims: { route: string; host: string }[] } {
  const refusedClaims: { route: string; host: string }[] = [];
  const routes = new Map<string, RouteRecord>();
  for (const route of [...candidates].sort((a, b) => byCodeUnits(a.id, b.id))) {
    const claimed = withClaims(route, hostClaims);
    for (const host of claimed.refused) refusedClaims.push({ route: route.id, host });
    if (claimed.route) routes.set(route.id, claimed.route);
  }
  return { routes, refusedClaims };
}

/** Port numbers per Service that `routes` reference through valid backends and mirrors. */
export function referencedPorts(routes: Iterable<RouteRecord>): Map<string, Set<number>> {
  const ports = new Map<string, Set<number>>();
  for (const route of routes) {
    for (const rule of route.rules) {
      const mirrors = rule.filters.mirrors ?? [];
      for (const backend of [...rule.backends, ...mirrors]) {
        if (!("service" in backend)) continue;
        const set = ports.get(backend.service) ?? new Set<number>();
        set.add(backend.port);
        ports.set(backend.service, set);
      }
    }
  }
  return ports;
}

/** The namespace a route id names (`<source>:<namespace>/<name>...`). */
export function routeNamespace(id: string): string {
  return id.slice(id.indexOf(":") + 1).split("/")[0] ?? "";
}

function withClaims(
  route: RouteRecord,
  claims: HostClaims | undefined,
): { route: RouteRecord | undefined; refused: string[] } {
  if (claims === undefined) return { route, refused: [] };
  const namespace = routeNamespace(route.id);
  if (route.hostnames.length === 0) {
    return mayClaim(claims, namespace, undefined)
      ? { route, refused: [] }
      : { route: undefined, refused: ["*"] };
  }
  const allowed = route.hostnames.filter((host) => mayClaim(claims, namespace, host));
  const refused = route.hostnames.filter((host) => !allowed.includes(host));
  if (refused.length === 0) return { route, refused };
  return { route: allowed.length > 0 ? { ...route, hostnames: allowed } : undefined, refused };
}

function withOwnership(
  statuses: ReadonlyMap<string, readonly RouteParentStatus[]>,
  refusedClaims: readonly { route: string; host: string }[],
  conflicts: readonly RouteConflict[],
  source: "httproute" | "grpcroute" | "tlsroute" = "httproute",
): Map<string, RouteParentStatus[]> {
  const out = new Map<string, RouteParentStatus[]>();
  for (const [key, parents] of statuses) {
    const id = `${source}:${key}`;
    const refused = refusedClaims.filter((item) => item.route === id).map((item) => item.host);
    const lost = conflicts.filter((item) => item.loser === id);
    out.set(
      key,
      parents.map((parent) => ({
        ...parent,
        conditions: [
          ...parent.conditions,
          ownership(refused, lost, parent.conditions[0]?.observedGeneration),
        ],
      })),
    );
  }
  return out;
}

function ownership(
  refused: readonly string[],
  lost: readonly RouteConflict[],
  generation?: number,
): Condition {
  const parts: string[] = [];
  if (refused.length > 0) parts.push(`HOST_CLAIMS does not let this namespace claim ${refused.join(", ")}`);
  for (const conflict of lost.slice(0, 5)) {
    parts.push(
      `${conflict.host} ${conflict.match} is served by ${conflict.winner} (older, or first by name)`,
    );
  }
  if (lost.length > 5) parts.push(`and ${lost.length - 5} more conflicts`);
  if (parts.length === 0) {
    return condition(
      HOST_OWNERSHIP_CONDITION,
      true,
      "Owned",
      "Every hostname and match is served by this route",
      generation,
    );
  }
  const reason = refused.length > 0 ? "NotAllowedByHostClaims" : "ShadowedByOlderRoute";
  return condition(HOST_OWNERSHIP_CONDITION, false, reason, parts.join("; "), generation);
}
