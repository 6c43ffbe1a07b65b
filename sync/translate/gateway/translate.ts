import { byCodeUnits } from "../../../lib/code-unit-order.js";
import type { RouteRecord } from "../../../store/routes.js";
import type { KubeConfigMap } from "../ca-bundles.js";
import type { KubeService } from "../kube-objects.js";
import type { KubeSecret } from "../tls-secrets.js";
import { addressesOf, type GatewayAddressSettings } from "./addresses.js";
import {
  type BackendClientCertificateUse,
  backendClientCertificateOf,
} from "./backend-client-certificate.js";
import { serviceMap } from "./backends.js";
import {
  type CertificateContext,
  type CertificateUse,
  certificateUses,
  resolveCertificateRefs,
} from "./certificate-refs.js";
import { type Condition, condition, type RouteParentStatus, stamped } from "./conditions.js";
import {
  allowsInsecureFallback,
  type ClientValidationUse,
  clientValidationUses,
  frontendValidationOf,
} from "./frontend-validation.js";
import { type GatewayStatus, gatewayStatusesOf } from "./gateway-status.js";
import { GRPC_ROUTE_KIND, type GRPCRoute } from "./grpc-route.js";
import { type HttpRouteTranslation, translateHttpRoute, translateRouteOfKind } from "./http-route.js";
import { endsTlsWithCertificates } from "./listener-conditions.js";
import { evaluateGateway, type GatewayView } from "./listeners.js";
import {
  type Gateway,
  type GatewayClass,
  type HTTPRoute,
  keyOf,
  type Namespace,
  namespaceOf,
  type ObjectMeta,
  type ReferenceGrant,
  type RouteKindName,
} from "./objects.js";
import { caBundleContextOf, certificateContextOf } from "./reference-contexts.js";
import { TLS_ROUTE_KIND, type TLSRoute } from "./tls-route.js";

export interface GatewayApiInput {
  /** GatewayClass.spec.controllerName that marks a class as ours, e.g. `edgeslice.io/gateway-controller`. */
  readonly controllerName: string;
  readonly gatewayClasses: readonly GatewayClass[];
  readonly gateways: readonly Gateway[];
  readonly httpRoutes: readonly HTTPRoute[];
  /** GRPCRoutes (grpc-route.ts): translated as HTTPRoutes are, their backends spoken to over h2c. */
  readonly grpcRoutes?: readonly GRPCRoute[];
  /** TLSRoutes (tls-route.ts): attached to Passthrough TLS listeners, their connections relayed by SNI. */
  readonly tlsRoutes?: readonly TLSRoute[];
  readonly referenceGrants: readonly ReferenceGrant[];
  /** The cluster's Services: backendRefs must name one of them and one of its ports. */
  readonly services: readonly KubeService[];
  /** Namespaces with their labels, for `allowedRoutes.namespaces.from: Selector`; without them it admits none. */
  readonly namespaces?: readonly Namespace[];
  /** The cluster's TLS Secrets, for HTTPS listeners' certificateRefs; without them every such ref is invalid. */
  readonly secrets?: readonly KubeSecret[];
  /** ConfigMaps holding a CA bundle, for Gateways' tls.frontend caCertificateRefs (frontend-validation.ts). */
  readonly configMaps?: readonly KubeConfigMap[];
  /** GATEWAY_ADDRESSES: written into status.addresses; a Gateway without any is not Programmed. */
  readonly addresses?: GatewayAddressSettings;
  /** When given (ms), every condition gets this lastTransitionTime; leave it out and let the writer merge. */
  readonly now?: number;
}

/** Something to log: the object (`Kind namespace/name`) and what was not applied or why. */
export interface Problem {
  readonly object: string;
  readonly reason: string;
}

export interface GatewayApiTranslation {
  /** One record per HTTPRoute accepted by at least one of our Gateways, sorted by id. */
  readonly routes: readonly RouteRecord[];
  readonly statuses: {
    /** Our GatewayClasses, by name. */
    readonly gatewayClasses: ReadonlyMap<string, { readonly conditions: readonly Condition[] }>;
    /** Our Gateways, by `namespace/name`. */
    readonly gateways: ReadonlyMap<string, GatewayStatus>;
    /**
     * Every HTTPRoute given, by `namespace/name`: our entries of `status.parents` (empty when none of its
     * parents is ours, so the writer removes entries we wrote before; see mergeRouteParents).
     */
    readonly httpRoutes: ReadonlyMap<string, readonly RouteParentStatus[]>;
    /** Every GRPCRoute given, as httpRoutes. */
    readonly grpcRoutes?: ReadonlyMap<string, readonly RouteParentStatus[]>;
    /** Every TLSRoute given, as httpRoutes. */
    readonly tlsRoutes?: ReadonlyMap<string, readonly RouteParentStatus[]>;
  };
  readonly problems: readonly Problem[];
  /** The certificates our serving HTTPS listeners use, by Secret id. */
  readonly certificates: readonly CertificateUse[];
  /** The client certificate validations our serving HTTPS listeners ask for, per Gateway and port. */
  readonly clientValidations: readonly ClientValidationUse[];
  /** Our Gateways' usable backend client certificates (spec.tls.backend), sorted by Gateway. */
  readonly backendClientCertificates: readonly BackendClientCertificateUse[];
}

/**
 * Gateway API objects of one cluster → route records and the status each object should carry. Pure and
 * deterministic: the same objects in any order give equal output (maps are filled in key order).
 * Only GatewayClasses whose controllerName is ours count, only Gateways of those classes, only HTTPRoutes
 * attached to those Gateways.
 */
export function translateGatewayApi(input: GatewayApiInput): GatewayApiTranslation {
  const classes = gatewayClassesOf(input);
  const certificates = certificateContextOf(input.secrets ?? [], input.referenceGrants);
  const { gateways, insecure, backendClients } = gatewayViewsOf(input, classes.problems, certificates);
  const context = {
    controllerName: input.controllerName,
    gateways,
    namespaceLabels: new Map(
      (input.namespaces ?? []).map((item) => [item.metadata.name, item.metadata.labels ?? {}]),
    ),
    backends: { services: serviceMap(input.services), grants: input.referenceGrants },
  };
  const tally: RouteTally = { routes: [], attachedRoutes: new Map(), problems: [] };
  const httpRoutes = translateRoutes(tally, "HTTPRoute", input.httpRoutes, input.now, (route) =>
    translateHttpRoute(route, context),
  );
  const grpcRoutes = translateRoutes(tally, "GRPCRoute", input.grpcRoutes ?? [], input.now, (route) =>
    translateRouteOfKind(route, context, GRPC_ROUTE_KIND),
  );
  const tlsRoutes = translateRoutes(tally, "TLSRoute", input.tlsRoutes ?? [], input.now, (route) =>
    translateRouteOfKind(route, context, TLS_ROUTE_KIND),
  );
  tally.routes.sort((a, b) => byCodeUnits(a.id, b.id));
  return {
    routes: tally.routes,
    statuses: {
      gatewayClasses: classes.statuses,
      gateways: gatewayStatusesOf(gateways, { insecure, backendClients }, tally.attachedRoutes, input.now),
      httpRoutes,
      grpcRoutes,
      tlsRoutes,
    },
    problems: tally.problems,
    certificates: certificateUses(
      [...gateways.values()].flatMap((gateway) => gateway.listeners),
      certificates,
    ),
    clientValidations: clientValidationUses(gateways.values()),
    backendClientCertificates: [...backendClients.values()].flatMap((found) =>
      found.use ? [found.use] : [],
    ),
  };
}

/**
 * Our GatewayClasses' statuses, and per class name why it is not accepted (undefined: it is). A reference to
 * parameters is rejected with InvalidParameters (GatewayClass.spec.parametersRef: edgeslice reads none).
 */
function gatewayClassesOf(input: GatewayApiInput) {
  const statuses = new Map<string, { conditions: Condition[] }>();
  const problems = new Map<string, string | undefined>();
  for (const gatewayClass of sortBy(input.gatewayClasses, (item) => item.metadata.name)) {
    if (gatewayClass.spec.controllerName !== input.controllerName) continue;
    const name = gatewayClass.metadata.name;
    const generation = gatewayClass.metadata.generation;
    const problem = gatewayClass.spec.parametersRef
      ? "edgeslice reads no parameters; remove parametersRef"
      : undefined;
    problems.set(name, problem);
    const accepted = problem
      ? condition("Accepted", false, "InvalidParameters", problem, generation)
      : condition("Accepted", true, "Accepted", "GatewayClass accepted", generation);
    statuses.set(name, { conditions: stamped([accepted], input.now) });
  }
  return { statuses, problems };
}

/**
 * Our Gateways (of one of our classes) as the listeners evaluate them, by `namespace/name`, and the keys of
 * those that let a port take clients without a valid certificate (InsecureFrontendValidationMode).
 */
function gatewayViewsOf(
  input: GatewayApiInput,
  classProblems: ReadonlyMap<string, string | undefined>,
  certificates: CertificateContext,
) {
  const caBundles = caBundleContextOf(input.configMaps ?? [], input.referenceGrants);
  const gateways = new Map<string, GatewayView>();
  const insecure = new Set<string>();
  const backendClients = new Map<string, NonNullable<ReturnType<typeof backendClientCertificateOf>>>();
  for (const gateway of sortBy(input.gateways, keyOf)) {
    const className = gateway.spec.gatewayClassName;
    if (!classProblems.has(className)) continue;
    const classProblem = classProblems.get(className);
    const problem = classProblem ? `GatewayClass ${className} is not accepted: ${classProblem}` : undefined;
    const addresses = input.addresses ? addressesOf(input.addresses, keyOf(gateway), className) : [];
    if (allowsInsecureFallback(gateway)) insecure.add(keyOf(gateway));
    const backendClient = backendClientCertificateOf(gateway, certificates);
    if (backendClient) backendClients.set(keyOf(gateway), backendClient);
    gateways.set(
      keyOf(gateway),
      evaluateGateway(
        gateway,
        problem,
        addresses,
        (listener) => {
          const refs = endsTlsWithCertificates(listener) ? (listener.tls?.certificateRefs ?? []) : [];
          return refs.length > 0
            ? resolveCertificateRefs(namespaceOf(gateway), refs, certificates)
            : undefined;
        },
        (listener) =>
          listener.protocol === "HTTPS" ? frontendValidationOf(gateway, listener.port, caBundles) : undefined,
      ),
    );
  }
  return { gateways, insecure, backendClients };
}

/** What the routes of every kind add up to: their records, the routes per listener, their problems. */
interface RouteTally {
  readonly routes: RouteRecord[];
  /** Per `gateway\nlistener`, the routes (`Kind namespace/name`) attached to it. */
  readonly attachedRoutes: Map<string, Set<string>>;
  readonly problems: Problem[];
}

/** Translates the routes of one kind into `tally`; their statuses by `namespace/name`. */
function translateRoutes<R extends { metadata: ObjectMeta }>(
  tally: RouteTally,
  kind: RouteKindName,
  objects: readonly R[],
  now: number | undefined,
  translateOne: (route: R) => HttpRouteTranslation,
): Map<string, RouteParentStatus[]> {
  const statuses = new Map<string, RouteParentStatus[]>();
  for (const route of sortBy(objects, keyOf)) {
    const key = keyOf(route);
    const result = translateOne(route);
    if (result.record) tally.routes.push(result.record);
    statuses.set(
      key,
      result.parents.map((parent) => ({ ...parent, conditions: stamped(parent.conditions, now) })),
    );
    for (const { gateway, listeners } of result.attached) {
      for (const listener of listeners) {
        const listenerKey = `${gateway}\n${listener}`;
        const counted = tally.attachedRoutes.get(listenerKey) ?? new Set<string>();
        counted.add(`${kind} ${key}`);
        tally.attachedRoutes.set(listenerKey, counted);
      }
    }
    for (const reason of result.problems) tally.problems.push({ object: `${kind} ${key}`, reason });
  }
  return statuses;
}

function sortBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  return [...items].sort((a, b) => byCodeUnits(key(a), key(b)));
}
