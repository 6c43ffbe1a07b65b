import { serviceId } from "../../../store/names.js";
import type { BackendRef } from "../../../store/routes.js";
import { appProtocolChoice } from "../app-protocol.js";
import type { KubeService } from "../kube-objects.js";
import { type KubeBackendRef, namespaceOf as namespaceOfObject, type ReferenceGrant } from "./objects.js";

/** A reference problem with its Gateway API reason (RouteConditionReason for ResolvedRefs). */
export interface RefProblem {
  readonly reason: "RefNotPermitted" | "InvalidKind" | "BackendNotFound" | "UnsupportedProtocol";
  readonly message: string;
}

/** What a backendRef resolves against: the cluster's Services by `namespace/name`, and ReferenceGrants. */
export interface BackendContext {
  readonly services: ReadonlyMap<string, KubeService>;
  readonly grants: readonly ReferenceGrant[];
}

export function serviceMap(services: readonly KubeService[]): Map<string, KubeService> {
  return new Map(
    services.map((service) => [serviceId(namespaceOfObject(service), service.metadata.name), service]),
  );
}

/**
 * ReferenceGrant (gateway.networking.k8s.io): a reference from `from` to an object in another namespace is
 * allowed when a grant in the target's namespace lists the source (group, kind, namespace) among `from` and
 * the target (group, kind, and name unless the entry names none) among `to`. Core group is "".
 */
export function referenceGranted(
  grants: readonly ReferenceGrant[],
  from: { readonly group: string; readonly kind: string; readonly namespace: string },
  to: { readonly group: string; readonly kind: string; readonly namespace: string; readonly name: string },
): boolean {
  return grants.some(
    (grant) =>
      namespaceOfObject(grant) === to.namespace &&
      grant.spec.from.some(
        (entry) =>
          entry.group === from.group && entry.kind === from.kind && entry.namespace === from.namespace,
      ) &&
      grant.spec.to.some(
        (entry) =>
          entry.group === to.group && entry.kind === to.kind && (!entry.name || entry.name === to.name),
      ),
  );
}

/**
 * One HTTPBackendRef → a store backend. Valid: a core Service (group "", kind Service) in the route's
 * namespace or granted by a ReferenceGrant, with that TCP port. Anything else stays in the rule with its
 * weight as `{ invalid }`, so its share of requests is answered 500 (HTTPRouteRule.backendRefs).
 * Weight defaults to 1.
 *
 * A Service this cluster does not have is the exception: it is published as a valid backend with the
 * backendRef's port and reported BackendNotFound. The same route is applied to several clusters and merged
 * by the router only when the copies are identical; during a rollout the Service often exists in some of
 * them only, and the router resolves the backend against every publishing cluster's service records (no
 * record anywhere: 500 there). A wrong kind, a missing grant or port stay invalid: they are the same in
 * every cluster and are configuration or security errors, not rollout order.
 */
export function resolveBackendRef(
  ref: KubeBackendRef,
  routeNamespace: string,
  fromKind: string,
  context: BackendContext,
  /** TLSRoute: the router relays bytes, so any appProtocol of the port will do. */
  options: { readonly anyAppProtocol?: boolean } = {},
): { backend: BackendRef; problem?: RefProblem } {
  const weight = ref.weight ?? 1;
  const group = ref.group ?? "";
  const kind = ref.kind ?? "Service";
  const namespace = ref.namespace ?? routeNamespace;
  const target = `${namespace}/${ref.name}`;
  const invalid = (problem: RefProblem) => ({
    backend: { invalid: `${problem.reason}: ${problem.message}`.slice(0, 256), weight },
    problem,
  });
  if (group !== "" || kind !== "Service") {
    return invalid({
      reason: "InvalidKind",
      message: `${group || "core"}/${kind} ${target} is not a Service`,
    });
  }
  if (namespace !== routeNamespace) {
    const from = { group: "gateway.networking.k8s.io", kind: fromKind, namespace: routeNamespace };
    if (!referenceGranted(context.grants, from, { group: "", kind: "Service", namespace, name: ref.name })) {
      return invalid({
        reason: "RefNotPermitted",
        message: `no ReferenceGrant in ${namespace} allows Service ${target}`,
      });
    }
  }
  if (ref.port === null || ref.port === undefined) {
    return invalid({ reason: "BackendNotFound", message: `Service ${target}: backendRef has no port` });
  }
  const service = context.services.get(target);
  if (!service) {
    const problem: RefProblem = { reason: "BackendNotFound", message: `Service ${target} not found` };
    return { backend: { service: target, port: ref.port, weight }, problem };
  }
  const port = (service.spec?.ports ?? []).find((item) => item.port === ref.port);
  if (!port)
    return invalid({ reason: "BackendNotFound", message: `Service ${target} has no port ${ref.port}` });
  if ((port.protocol ?? "TCP") !== "TCP") {
    const message = `Service ${target} port ${ref.port} is ${port.protocol}, HTTP needs TCP`;
    return invalid({ reason: "UnsupportedProtocol", message });
  }
  const choice = appProtocolChoice(port.appProtocol);
  if (!choice.supported && options.anyAppProtocol !== true) {
    return invalid({
      reason: "UnsupportedProtocol",
      message: `Service ${target} port ${ref.port}: ${choice.reason}`,
    });
  }
  return { backend: { service: target, port: ref.port, weight } };
}
