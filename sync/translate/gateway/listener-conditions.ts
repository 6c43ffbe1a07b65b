import type { ListenerCertificates } from "./certificate-refs.js";
import { type Condition, condition } from "./conditions.js";
import type { FrontendValidation } from "./frontend-validation.js";
import { selectorProblem } from "./label-selector.js";
import { GATEWAY_GROUP, type LabelSelector, type Listener } from "./objects.js";

export interface RouteGroupKind {
  readonly group: string;
  readonly kind: string;
}

/**
 * HTTPS listeners end TLS on the Node router with the Secrets their `tls.certificateRefs` name
 * (certificate-refs.ts); one without certificateRefs is served as before, its TLS ended in front of the router.
 * TLS listeners hand a connection to the TLSRoute that claims its SNI (tls-route.ts): as it came in Passthrough
 * mode, decrypted with the listener's certificateRefs in Terminate mode.
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
 * HTTPS listener and TLS listeners of either mode on one port are told apart by the server name
 * (TLSRouteModeMixed). HTTP with
 * either would need the first bytes to tell cleartext from TLS, which the Gateway API does not ask for.
 */
export const SHARE_A_PORT: ReadonlySet<string> = new Set(["HTTPS", "TLS"]);
const NAMESPACE_FROM = new Set(["Same", "All", "Selector"]);

/**
 * The kinds a listener supports (its protocol's, narrowed by allowedRoutes.kinds; none when the router cannot
 * serve it in its TLS mode, as a listener not accepted takes no route) and the kinds it names that its
 * protocol never takes (InvalidRouteKinds).
 */
export function listenerKinds(listener: Listener): {
  readonly supportedKinds: readonly RouteGroupKind[];
  readonly invalidKinds: readonly { readonly group?: string | null; readonly kind: string }[];
} {
  if (!SUPPORTED_PROTOCOLS.has(listener.protocol)) return { supportedKinds: [], invalidKinds: [] };
  const known = SERVED_KINDS[listener.protocol] ?? [];
  const served = tlsModeProblem(listener) === undefined ? known : [];
  const kinds = listener.allowedRoutes?.kinds ?? [];
  return {
    supportedKinds:
      kinds.length === 0 ? served : served.filter((kind) => kinds.some((allowed) => sameKind(allowed, kind))),
    invalidKinds: kinds.filter((allowed) => !known.some((kind) => sameKind(allowed, kind))),
  };
}

/**
 * Listener Accepted, by the first problem: a protocol edgeslice does not serve (UnsupportedProtocol), a TLS mode
 * it does not serve or namespaces it cannot select (UnsupportedValue), protocols clashing on the port
 * (ProtocolConflict), client certificate validation with no usable CA certificate (NoValidCACertificate).
 */
export function acceptedCondition(
  listener: Listener,
  facts: {
    readonly conflicted: boolean;
    readonly from: string;
    readonly selector: LabelSelector | undefined;
    readonly validation: FrontendValidation | undefined;
  },
  generation: number | null | undefined,
): Condition {
  const refuse = (reason: string, message: string) =>
    condition("Accepted", false, reason, message, generation);
  const { from, selector, validation } = facts;
  const modeProblem = tlsModeProblem(listener);
  if (!SUPPORTED_PROTOCOLS.has(listener.protocol)) {
    return refuse("UnsupportedProtocol", `protocol ${listener.protocol} is not supported (HTTP, HTTPS, TLS)`);
  }
  if (modeProblem !== undefined) return refuse("UnsupportedValue", modeProblem);
  if (facts.conflicted)
    return refuse("ProtocolConflict", `port ${listener.port} is used with several protocols`);
  if (!NAMESPACE_FROM.has(from))
    return refuse("UnsupportedValue", `allowedRoutes.namespaces.from "${from}" is not supported`);
  if (from === "Selector" && (selector === undefined || selectorProblem(selector) !== undefined)) {
    return refuse(
      "UnsupportedValue",
      selector ? (selectorProblem(selector) as string) : "from Selector without a selector",
    );
  }
  if (validation && validation.bundle === undefined) {
    const cause = validation.problem?.message ?? "no CA certificate";
    return refuse(
      "NoValidCACertificate",
      `client certificate validation has no usable CA certificate: ${cause}`,
    );
  }
  return condition("Accepted", true, "Accepted", "Listener accepted", generation);
}

/**
 * Listener ResolvedRefs: False for route kinds its protocol never takes (InvalidRouteKinds), then a
 * certificateRef that does not resolve, then a caCertificateRef of its client validation that does not.
 */
export function resolvedRefsCondition(
  invalidKinds: readonly { readonly group?: string | null; readonly kind: string }[],
  certificates: ListenerCertificates | undefined,
  validation: FrontendValidation | undefined,
  generation: number | null | undefined,
): Condition {
  if (invalidKinds.length > 0) {
    const names = invalidKinds.map((kind) => `${kind.group ?? GATEWAY_GROUP}/${kind.kind}`).join(", ");
    return condition(
      "ResolvedRefs",
      false,
      "InvalidRouteKinds",
      `unsupported route kinds: ${names}`,
      generation,
    );
  }
  const problem = certificates?.problem ?? validation?.problem;
  if (problem) return condition("ResolvedRefs", false, problem.reason, problem.message, generation);
  return condition("ResolvedRefs", true, "ResolvedRefs", "References resolved", generation);
}

/**
 * A TLS listener's mode: Passthrough is served (tls-route.ts) and so is Terminate, the API's default: the
 * router ends TLS with the listener's certificateRefs and relays the decrypted bytes as TCP
 * (TLSRouteModeTerminate). A Terminate listener without certificateRefs has nothing to end TLS with.
 */
function tlsModeProblem(listener: Listener): string | undefined {
  if (listener.protocol !== "TLS") return undefined;
  const mode = listener.tls?.mode ?? "Terminate";
  if (mode === "Passthrough") return undefined;
  if (mode !== "Terminate") return `TLS mode ${mode} is not supported (Passthrough, Terminate)`;
  if ((listener.tls?.certificateRefs ?? []).length > 0) return undefined;
  return "TLS mode Terminate needs tls.certificateRefs: the router ends TLS with them";
}

/** Whether the router ends the TLS of this listener's connections with its certificateRefs (HTTPS, TLS Terminate). */
export function endsTlsWithCertificates(listener: Listener): boolean {
  if (listener.protocol === "HTTPS") return true;
  return listener.protocol === "TLS" && (listener.tls?.mode ?? "Terminate") === "Terminate";
}

/** A TLS listener in mode Terminate: its TLSRoutes' connections are relayed once the router ended their TLS. */
export function terminatesTlsRoutes(listener: Listener): boolean {
  return listener.protocol === "TLS" && endsTlsWithCertificates(listener);
}

function sameKind(kind: { group?: string | null; kind: string }, served: RouteGroupKind): boolean {
  return (kind.group ?? GATEWAY_GROUP) === served.group && kind.kind === served.kind;
}
