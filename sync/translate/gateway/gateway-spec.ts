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
 * What in a Gateway's spec keeps edgeslice from accepting it, in the order the spec's reasons rank them:
 * - its GatewayClass is not accepted (Invalid);
 * - `infrastructure.parametersRef`: edgeslice reads no parameters, so every reference is to an unsupported
 *   kind, which GatewayInfrastructure.parametersRef says is rejected with InvalidParameters;
 * - `addresses`: edgeslice allocates none, the routers sit behind what the operator put in front of them
 *   (GATEWAY_ADDRESSES). An entry with a value asks for a static address (GatewayStaticAddresses, not
 *   supported); an entry without one asks for any address of its type (GatewayAddressEmpty), which is met
 *   when GATEWAY_ADDRESSES gives this Gateway one of that type. Anything else is UnsupportedAddress.
 */
export function gatewaySpecProblem(
  gateway: Gateway,
  classProblem: string | undefined,
  configured: readonly GatewayAddress[],
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
    if (address.value) {
      return {
        reason: "UnsupportedAddress",
        message: `edgeslice does not assign static addresses (${type} ${address.value}); leave the value empty`,
      };
    }
    if (!ADDRESS_TYPES.has(type) || !configured.some((known) => known.type === type)) {
      return {
        reason: "UnsupportedAddress",
        message: `no ${type} address is known for this Gateway's routers: set one in GATEWAY_ADDRESSES on the sync`,
      };
    }
  }
  return undefined;
}

/** The addresses a Gateway reports: of the types its spec asks for, or all when it asks for none. */
export function reportedAddresses(
  gateway: Gateway,
  configured: readonly GatewayAddress[],
): readonly GatewayAddress[] {
  const requested = gateway.spec.addresses ?? [];
  if (requested.length === 0) return configured;
  const types = new Set(requested.map((address) => address.type ?? "IPAddress"));
  return configured.filter((address) => types.has(address.type));
}
