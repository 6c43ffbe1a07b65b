import type { ClientValidationMode } from "../../../store/client-validations.js";
import type { CaBundle } from "../ca-bundles.js";
import type { GatewayAddress } from "./addresses.js";
import type { ListenerCertificates } from "./certificate-refs.js";
import { type Condition, condition } from "./conditions.js";
import type { FrontendValidation } from "./frontend-validation.js";
import { assignAddresses, gatewaySpecProblem } from "./gateway-spec.js";
import { selectorMatches } from "./label-selector.js";
import {
  acceptedCondition,
  listenerKinds,
  type RouteGroupKind,
  resolvedRefsCondition,
  SHARE_A_PORT,
  terminatesTlsRoutes,
} from "./listener-conditions.js";
import { type Gateway, keyOf, type LabelSelector, type Listener, namespaceOf } from "./objects.js";

export type { RouteGroupKind } from "./listener-conditions.js";

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
  /** A TLS listener in mode Terminate: the router ends its TLSRoutes' TLS and relays the decrypted bytes. */
  readonly terminatesTls: boolean;
  /** An HTTPS listener's client certificate validation (frontend-validation.ts), when its Gateway asks for one. */
  readonly validation: { readonly mode: ClientValidationMode; readonly bundle: CaBundle } | undefined;
}

/** Resolves one listener's certificateRefs (undefined: it has none to resolve). */
export type ListenerCertificateResolver = (listener: Listener) => ListenerCertificates | undefined;

/** Resolves one listener's client certificate validation (undefined: none applies to it). */
export type ListenerValidationResolver = (listener: Listener) => FrontendValidation | undefined;

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
  validations?: ListenerValidationResolver,
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
      validations?.(listener),
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
  validation: FrontendValidation | undefined,
): { view: ListenerView; valid: boolean } {
  const from = listener.allowedRoutes?.namespaces?.from ?? "Same";
  const selector = listener.allowedRoutes?.namespaces?.selector ?? undefined;
  const { supportedKinds, invalidKinds } = listenerKinds(listener);
  const accepted = acceptedCondition(listener, { conflicted, from, selector, validation }, generation);
  const valid = accepted.status === "True";
  const resolvedRefs = resolvedRefsCondition(invalidKinds, certificates, validation, generation);
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
      terminatesTls: terminatesTlsRoutes(listener),
      validation:
        serving && validation?.bundle ? { mode: validation.mode, bundle: validation.bundle } : undefined,
    },
  };
}

function programmedProblem(valid: boolean, accepted: Condition): string {
  return valid ? "no supported route kinds" : accepted.message;
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
