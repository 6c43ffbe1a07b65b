import type { GatewayAddress } from "./addresses.js";
import type { ListenerCertificates } from "./certificate-refs.js";
import { type Condition, condition } from "./conditions.js";
import { assignAddresses, gatewaySpecProblem } from "./gateway-spec.js";
import { selectorMatches, selectorProblem } from "./label-selector.js";
import {
  GATEWAY_GROUP,
  type Gateway,
  keyOf,
  type LabelSelector,
  type Listener,
  namespaceOf,
} from "./objects.js";

/**
 * HTTPS listeners end TLS on the Node router with the Secrets their `tls.certificateRefs` name
 * (certificate-refs.ts); one without certificateRefs is served as before, its TLS ended in front of the router.
 * TLS listeners in Passthrough mode hand a connection to the TLSRoute that claims its SNI (tls-route.ts).
 */
export const SUPPORTED_PROTOCOLS: ReadonlySet<string> = new Set(["HTTP", "HTTPS", "TLS"]);
/**
 * The route kinds each protocol's listener takes: HTTP and HTTPS take HTTPRoute, and GRPCRoute, which the
 * Gateway API allows on both by default ("GRPCRoute ... MUST be accepted on HTTP and HTTPS listeners" unless
 * allowedRoutes.kinds says otherwise; GEP-1016); TLS takes TLSRoute.
 */
const SERVED_KINDS: Readonly<Record<string, readonly RouteGroupKind[]>> = {
  HTTP: [
    { group: GATEWAY_GROUP, kind: "HTTPRoute" },
    { group: GATEWAY_GROUP, kind: "GRPCRoute" },
  ],
  HTTPS: [
    { group: GATEWAY_GROUP, kind: "HTTPRoute" },
    { group: GATEWAY_GROUP, kind: "GRPCRoute" },
  ],
  TLS: [{ group: GATEWAY_GROUP, kind: "TLSRoute" }],
};
/**
 * Protocols that may share a port: the router reads a TLS connection's ClientHello before it ends TLS, so an
 * HTTPS listener and a Passthrough TLS listener of one port are told apart by the server name. HTTP with
 * either would need the first bytes to tell cleartext from TLS, which the Gateway API does not ask for.
 */
const SHARE_A_PORT: ReadonlySet<string> = new Set(["HTTPS", "TLS"]);
const NAMESPACE_FROM = new Set(["Same", "All", "Selector"]);

export interface RouteGroupKind {
  readonly group: string;
  readonly kind: string;
}

/** One listener as routes see it, and its conditions (attachedRoutes is counted later). */
export interface ListenerView {
  readonly name: string;
  readonly port: number;
  readonly hostname: string | undefined;
  /** Routes may attach: the listener is accepted and lists a kind we serve (supportedKinds says which). */
  readonly attachable: boolean;
  readonly supportedKinds: readonly RouteGroupKind[];
  /** allowedRoutes.namespaces.from, defaulted to Same. */
  readonly from: string;
  readonly selector: LabelSelector | undefined;
  readonly conditions: readonly Condition[];
  /** The Secrets (`ns/name`) whose certificates this listener serves: its usable certificateRefs. */
  readonly certificates: readonly string[];
}

/** Resolves one listener's certificateRefs (undefined: it has none to resolve). */
export type ListenerCertificateResolver = (listener: Listener) => ListenerCertificates | undefined;

/** One of our Gateways: whether it is accepted, its conditions, and its listeners. */
export interface GatewayView {
  readonly key: string;
  readonly namespace: string;
  readonly accepted: boolean;
  /** Where its routers are reached (GATEWAY_ADDRESSES), for status.addresses. */
  readonly addresses: readonly GatewayAddress[];
  readonly conditions: readonly Condition[];
  readonly listeners: readonly ListenerView[];
}

/**
 * Gateway and listener conditions (gateway.networking.k8s.io/v1 GatewayConditionType and
 * ListenerConditionType). What in a Gateway's own spec keeps it from being accepted (its class, its
 * parameters, an address type) and which addresses it gets are gateway-spec.ts's; one whose routers' address the operator did not state
 * (GATEWAY_ADDRESSES) is accepted but not Programmed (AddressNotAssigned: "none of the requested addresses
 * have been assigned"), so tools waiting for status.addresses are told why. A listener with a protocol other
 * than HTTP or HTTPS is not accepted (UnsupportedProtocol); listeners sharing a port with different protocols
 * conflict (ProtocolConflict).
 */
export function evaluateGateway(
  gateway: Gateway,
  classProblem: string | undefined,
  addresses: readonly GatewayAddress[],
  certificates?: ListenerCertificateResolver,
): GatewayView {
  const generation = gateway.metadata.generation;
  const protocolsByPort = new Map<number, Set<string>>();
  for (const listener of gateway.spec.listeners) {
    const protocols = protocolsByPort.get(listener.port) ?? new Set<string>();
    protocols.add(listener.protocol);
    protocolsByPort.set(listener.port, protocols);
  }
  const conflictedPort = (port: number) => {
    const protocols = [...(protocolsByPort.get(port) ?? [])];
    return protocols.length > 1 && !protocols.every((protocol) => SHARE_A_PORT.has(protocol));
  };
  const problem = gatewaySpecProblem(gateway, classProblem);
  const gatewayProblem = problem?.message;

  const evaluated = gateway.spec.listeners.map((listener) =>
    evaluateListener(
      listener,
      conflictedPort(listener.port),
      gatewayProblem,
      generation,
      certificates?.(listener),
    ),
  );
  const valid = evaluated.filter((listener) => listener.valid).length;
  let accepted: Condition;
  if (problem !== undefined) {
    accepted = condition("Accepted", false, problem.reason, problem.message, generation);
  } else if (valid === evaluated.length) {
    accepted = condition("Accepted", true, "Accepted", "Gateway accepted", generation);
  } else {
    const message = `${evaluated.length - valid} of ${evaluated.length} listeners are not valid`;
    accepted = condition("Accepted", valid > 0, "ListenersNotValid", message, generation);
  }
  const isAccepted = accepted.status === "True";
  const assignment = assignAddresses(gateway, addresses);
  const programmed = !isAccepted
    ? condition("Programmed", false, "Invalid", accepted.message, generation)
    : assignment.unusable !== undefined
      ? condition("Programmed", false, "AddressNotUsable", assignment.unusable, generation)
      : assignment.addresses.length === 0
        ? condition("Programmed", false, "AddressNotAssigned", NO_ADDRESS_MESSAGE, generation)
        : condition("Programmed", true, "Programmed", "Gateway programmed", generation);
  return {
    key: keyOf(gateway),
    namespace: namespaceOf(gateway),
    accepted: isAccepted,
    addresses: isAccepted ? assignment.addresses : [],
    conditions: [accepted, programmed],
    listeners: evaluated.map((item) => item.view),
  };
}

const NO_ADDRESS_MESSAGE =
  "Routes are served, but no address is known for this Gateway's routers: set GATEWAY_ADDRESSES on the sync";

function evaluateListener(
  listener: Listener,
  conflicted: boolean,
  gatewayProblem: string | undefined,
  generation: number | null | undefined,
  certificates: ListenerCertificates | undefined,
): { view: ListenerView; valid: boolean } {
  const from = listener.allowedRoutes?.namespaces?.from ?? "Same";
  const selector = listener.allowedRoutes?.namespaces?.selector ?? undefined;
  const supported = SUPPORTED_PROTOCOLS.has(listener.protocol);
  const modeProblem = tlsModeProblem(listener);
  // A listener the router cannot serve in its mode takes no kind (TLSRouteListenerTerminateNotSupported
  // expects supportedKinds empty).
  const known = SERVED_KINDS[listener.protocol] ?? [];
  const served = modeProblem === undefined ? known : [];
  const kinds = listener.allowedRoutes?.kinds ?? [];
  const supportedKinds = !supported
    ? []
    : kinds.length === 0
      ? served
      : served.filter((kind) => kinds.some((allowed) => sameKind(allowed, kind)));
  const invalidKinds = supported
    ? kinds.filter((allowed) => !known.some((kind) => sameKind(allowed, kind)))
    : [];

  let accepted: Condition;
  if (!supported) {
    const message = `protocol ${listener.protocol} is not supported (HTTP, HTTPS, TLS)`;
    accepted = condition("Accepted", false, "UnsupportedProtocol", message, generation);
  } else if (modeProblem !== undefined) {
    accepted = condition("Accepted", false, "UnsupportedValue", modeProblem, generation);
  } else if (conflicted) {
    const message = `port ${listener.port} is used with several protocols`;
    accepted = condition("Accepted", false, "ProtocolConflict", message, generation);
  } else if (!NAMESPACE_FROM.has(from)) {
    const message = `allowedRoutes.namespaces.from "${from}" is not supported`;
    accepted = condition("Accepted", false, "UnsupportedValue", message, generation);
  } else if (from === "Selector" && (selector === undefined || selectorProblem(selector) !== undefined)) {
    const message = selector ? (selectorProblem(selector) as string) : "from Selector without a selector";
    accepted = condition("Accepted", false, "UnsupportedValue", message, generation);
  } else {
    accepted = condition("Accepted", true, "Accepted", "Listener accepted", generation);
  }
  const valid = accepted.status === "True";
  const resolvedRefs =
    invalidKinds.length > 0
      ? condition(
          "ResolvedRefs",
          false,
          "InvalidRouteKinds",
          `unsupported route kinds: ${invalidKinds.map((kind) => `${kind.group ?? GATEWAY_GROUP}/${kind.kind}`).join(", ")}`,
          generation,
        )
      : certificates?.problem
        ? condition(
            "ResolvedRefs",
            false,
            certificates.problem.reason,
            certificates.problem.message,
            generation,
          )
        : condition("ResolvedRefs", true, "ResolvedRefs", "References resolved", generation);
  // A listener none of whose certificates can serve is not programmed; one with some keeps serving them. Its
  // routes stay attached: they were served before the router ended TLS (behind TLS ended in front of it), and
  // a sync whose RBAC cannot read Secrets must not take them away on upgrade.
  const noCertificate = certificates?.problem !== undefined && certificates.secrets.length === 0;
  const conflictedCondition = conflicted
    ? condition("Conflicted", true, "ProtocolConflict", accepted.message, generation)
    : condition("Conflicted", false, "NoConflicts", "No conflicts", generation);
  const serving = valid && gatewayProblem === undefined && supportedKinds.length > 0;
  const programmed =
    serving && !noCertificate
      ? condition("Programmed", true, "Programmed", "Listener programmed", generation)
      : condition(
          "Programmed",
          false,
          "Invalid",
          gatewayProblem ??
            (serving && noCertificate
              ? (certificates?.problem?.message ?? "")
              : programmedProblem(valid, accepted)),
          generation,
        );
  return {
    valid,
    view: {
      name: listener.name,
      port: listener.port,
      hostname: listener.hostname ? listener.hostname.toLowerCase() : undefined,
      attachable: serving,
      supportedKinds,
      from,
      selector,
      conditions: [accepted, programmed, resolvedRefs, conflictedCondition],
      certificates: serving ? (certificates?.secrets ?? []) : [],
    },
  };
}

/**
 * A TLS listener's mode: Passthrough is served (tls-route.ts); Terminate, the API's default, would end TLS and
 * relay the plaintext as TCP, which the router does not do, so such a listener is not accepted
 * (TLSRouteListenerTerminateNotSupported: UnsupportedValue).
 */
function tlsModeProblem(listener: Listener): string | undefined {
  if (listener.protocol !== "TLS") return undefined;
  const mode = listener.tls?.mode ?? "Terminate";
  if (mode === "Passthrough") return undefined;
  return `TLS mode ${mode} is not supported: a TLS listener passes connections through (mode Passthrough); end TLS with protocol HTTPS`;
}

function programmedProblem(valid: boolean, accepted: Condition): string {
  return valid ? "no supported route kinds" : accepted.message;
}

function sameKind(kind: { group?: string | null; kind: string }, served: RouteGroupKind): boolean {
  return (kind.group ?? GATEWAY_GROUP) === served.group && kind.kind === served.kind;
}

/**
 * allowedRoutes.namespaces: Same (the Gateway's namespace), All, or Selector over the route namespace's
 * labels. A namespace not known (no labels given) is not selected.
 */
export function allowsNamespace(
  listener: ListenerView,
  gatewayNamespace: string,
  routeNamespace: string,
  namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
): boolean {
  if (listener.from === "All") return true;
  if (listener.from === "Same") return routeNamespace === gatewayNamespace;
  if (listener.from !== "Selector" || listener.selector === undefined) return false;
  const labels = namespaceLabels.get(routeNamespace);
  return labels !== undefined && selectorMatches(listener.selector, labels);
}
