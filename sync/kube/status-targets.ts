import type { DesiredRoutes } from "../translate/desired-routes.js";
import {
  gatewayClassStatus,
  gatewayStatus,
  httpRouteStatus,
  ingressStatus,
  policyStatus,
} from "../translate/object-status.js";
import type { RouteKind } from "./kinds.js";

/** One object whose status the sync writes, and the status it should carry given what it carries now. */
export interface StatusTarget {
  readonly kind: RouteKind;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly desired: (object: unknown) => object;
}

/** Names the object in logs and in what the writer remembers. */
export const statusTargetKey = (target: StatusTarget): string =>
  `${target.kind} ${target.namespace ?? ""}/${target.name}`;

/**
 * Every object of `statuses` with the merge that makes its status (object-status.ts): GatewayClasses,
 * Gateways, the route kinds, BackendTLSPolicies and Ingresses, in that order. `now` stamps the conditions.
 */
export function statusTargets(
  statuses: DesiredRoutes["statuses"],
  controllerName: string,
  now: () => number,
): StatusTarget[] {
  const at = () => new Date(now()).toISOString();
  const list: StatusTarget[] = [];
  for (const [name, desired] of statuses.gatewayClasses) {
    list.push({
      kind: "GatewayClass",
      namespace: undefined,
      name,
      desired: (o) => gatewayClassStatus(o, desired, at()),
    });
  }
  for (const [key, desired] of statuses.gateways) {
    const [namespace, name = ""] = key.split("/");
    list.push({ kind: "Gateway", namespace, name, desired: (o) => gatewayStatus(o, desired, at()) });
  }
  const routeKinds = [
    ["HTTPRoute", statuses.httpRoutes],
    ["GRPCRoute", statuses.grpcRoutes ?? new Map()],
    ["TLSRoute", statuses.tlsRoutes ?? new Map()],
  ] as const;
  for (const [kind, routeStatuses] of routeKinds) {
    for (const [key, parents] of routeStatuses) {
      const [namespace, name = ""] = key.split("/");
      // GRPCRoute's and TLSRoute's status is HTTPRoute's (RouteStatus): the same parents merge.
      list.push({
        kind,
        namespace,
        name,
        desired: (o) => httpRouteStatus(o, parents, controllerName, at()),
      });
    }
  }
  for (const [key, ancestors] of statuses.backendTlsPolicies ?? new Map()) {
    const [namespace, name = ""] = key.split("/");
    list.push({
      kind: "BackendTLSPolicy",
      namespace,
      name,
      desired: (o) => policyStatus(o, ancestors, controllerName, at()),
    });
  }
  for (const [key, desired] of statuses.ingresses) {
    const [namespace, name = ""] = key.split("/");
    list.push({ kind: "Ingress", namespace, name, desired: (o) => ingressStatus(o, desired) });
  }
  return list;
}
