import { type HostnameSet, hostnamesThroughListener, unionHostnames } from "./hostnames.js";
import { allowsNamespace, type GatewayView } from "./listeners.js";
import type { HTTPRoute, ParentRef, RouteKindName } from "./objects.js";
import { namespaceOf } from "./objects.js";

/** How one parentRef of a route attaches to one of our Gateways (RouteConditionReason for Accepted). */
export interface Attachment {
  readonly accepted: boolean;
  readonly reason: "Accepted" | "NoMatchingParent" | "NotAllowedByListeners" | "NoMatchingListenerHostname";
  readonly message: string;
  /** The listeners the route attached to: names for attachedRoutes, ports and hostnames for the record. */
  readonly listeners: readonly AttachedListener[];
  /** The hosts the route serves through those listeners. */
  readonly hostnames: HostnameSet;
}

export interface AttachedListener {
  readonly name: string;
  readonly port: number;
  readonly listenerHostname: string | undefined;
  readonly hostnames: HostnameSet;
  /** A TLS listener in mode Terminate (listeners.ts ListenerView). */
  readonly terminatesTls: boolean;
}

/**
 * Gateway API ParentReference: sectionName and port select listeners (both must match when both are set);
 * none selected → NoMatchingParent. A selected listener takes the route when it is usable, lists HTTPRoute
 * among its kinds and admits the route's namespace (allowedRoutes) — none → NotAllowedByListeners — and
 * shares at least one hostname with it — none → NoMatchingListenerHostname. "If 1 of 2 Gateway listeners
 * accept attachment from the referencing Route, the Route MUST be considered successfully attached."
 */
export function attachToGateway(
  parentRef: ParentRef,
  gateway: GatewayView,
  route: {
    readonly metadata: HTTPRoute["metadata"];
    readonly spec: { readonly hostnames?: readonly string[] | null };
  },
  namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
  /** The route's kind: a listener takes it only when its supportedKinds list it. */
  kind: RouteKindName = "HTTPRoute",
): Attachment {
  const selected = gateway.listeners.filter(
    (listener) =>
      (!parentRef.sectionName || listener.name === parentRef.sectionName) &&
      (!parentRef.port || listener.port === parentRef.port),
  );
  const refused = (reason: Attachment["reason"], message: string): Attachment => ({
    accepted: false,
    reason,
    message,
    listeners: [],
    hostnames: [],
  });
  if (selected.length === 0) {
    const wanted = [
      parentRef.sectionName ? `sectionName ${parentRef.sectionName}` : "",
      parentRef.port ? `port ${parentRef.port}` : "",
    ].filter(Boolean);
    return refused("NoMatchingParent", `Gateway ${gateway.key} has no listener with ${wanted.join(" and ")}`);
  }
  if (!gateway.accepted) return refused("NotAllowedByListeners", `Gateway ${gateway.key} is not accepted`);
  const routeNamespace = namespaceOf(route);
  const allowing = selected.filter(
    (listener) =>
      listener.attachable &&
      listener.supportedKinds.some((supported) => supported.kind === kind) &&
      allowsNamespace(listener, gateway.namespace, routeNamespace, namespaceLabels),
  );
  if (allowing.length === 0) {
    return refused("NotAllowedByListeners", `no listener of Gateway ${gateway.key} allows this route`);
  }
  const routeHostnames = route.spec.hostnames ?? [];
  const through = allowing
    .map(
      (listener): AttachedListener => ({
        name: listener.name,
        port: listener.port,
        listenerHostname: listener.hostname,
        terminatesTls: listener.terminatesTls,
        hostnames: hostnamesThroughListener(listener.hostname, routeHostnames),
      }),
    )
    .filter((item) => item.hostnames === "any" || item.hostnames.length > 0);
  if (through.length === 0) {
    return refused(
      "NoMatchingListenerHostname",
      `no listener of Gateway ${gateway.key} shares a hostname with this route`,
    );
  }
  return {
    accepted: true,
    reason: "Accepted",
    message: "Route accepted",
    listeners: through,
    hostnames: unionHostnames(through.map((item) => item.hostnames)),
  };
}
