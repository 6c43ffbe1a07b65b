import * as v from "valibot";
import type { GatewayAddress } from "./addresses.js";
import type { Gateway } from "./objects.js";

/** Why a Gateway of ours is not accepted (GatewayConditionReason for Accepted=False). */
export interface GatewaySpecProblem {
  readonly reason: "Invalid" | "InvalidParameters" | "UnsupportedAddress";
  readonly message: string;
}

const InfrastructureSchema = v.looseObject({
  parametersRef: v.nullish(
    v.looseObject({ group: v.nullish(v.string()), kind: v.string(), name: v.string() }),
  ),
});
const ADDRESS_TYPES: ReadonlySet<string> = new Set(["IPAddress", "Hostname"]);

/**
 * What in a Gateway's spec keeps edgeslice from accepting it:
 * - its GatewayClass is not accepted (Invalid);
 * - `infrastructure.parametersRef`: edgeslice reads no parameters, so every reference is to an unsupported
 *   kind, which GatewayInfrastructure.parametersRef says is rejected with InvalidParameters;
 * - an address of a type other than IPAddress and Hostname (UnsupportedAddress).
 */
export function gatewaySpecProblem(
  gateway: Gateway,
  classProblem: string | undefined,
): GatewaySpecProblem | undefined {
  if (classProblem !== undefined) return { reason: "Invalid", message: classProblem };
  const infrastructure = v.safeParse(InfrastructureSchema, gateway.spec.infrastructure ?? {});
  const parametersRef = infrastructure.success ? infrastructure.output.parametersRef : undefined;
  if (!infrastructure.success || parametersRef) {
    const target = parametersRef ? `${parametersRef.kind} ${parametersRef.name}` : "infrastructure";
    return {
      reason: "InvalidParameters",
      message: `edgeslice reads no Gateway parameters (${target}); remove infrastructure.parametersRef`,
    };
  }
  for (const address of gateway.spec.addresses ?? []) {
    const type = address.type ?? "IPAddress";
    if (!ADDRESS_TYPES.has(type)) {
      return {
        reason: "UnsupportedAddress",
        message: `address type ${type} is not supported (IPAddress, Hostname)`,
      };
    }
  }
  return undefined;
}

/** The addresses a Gateway reports, and why one it asked for cannot be used (Programmed=False AddressNotUsable). */
export interface AddressAssignment {
  readonly addresses: readonly GatewayAddress[];
  readonly unusable: string | undefined;
}

/**
 * edgeslice allocates no addresses: the routers are reached where the operator put them (GATEWAY_ADDRESSES),
 * so those are the addresses a Gateway can have. Without spec.addresses it reports them all. An address asked
 * for without a value (GatewayAddressEmpty) is given those of its type; a static one (GatewayStaticAddresses)
 * is usable when it is one of them, and is otherwise AddressNotUsable.
 */
export function assignAddresses(gateway: Gateway, configured: readonly GatewayAddress[]): AddressAssignment {
  const requested = gateway.spec.addresses ?? [];
  if (requested.length === 0) return { addresses: configured, unusable: undefined };
  const assigned: GatewayAddress[] = [];
  let unusable: string | undefined;
  for (const address of requested) {
    const type = address.type ?? "IPAddress";
    const value = address.value?.toLowerCase();
    const matching = configured.filter((known) => known.type === type && (!value || known.value === value));
    if (value && matching.length === 0) {
      unusable ??= `${type} ${address.value} is not where this Gateway's routers are reached (GATEWAY_ADDRESSES)`;
    }
    for (const known of matching) if (!assigned.includes(known)) assigned.push(known);
  }
  return { addresses: assigned, unusable };
}
