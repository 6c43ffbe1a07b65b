import type { GatewayAddress } from "./addresses.js";
import { type Condition, condition, stamped } from "./conditions.js";
import type { GatewayView, RouteGroupKind } from "./listeners.js";

export interface ListenerStatus {
  readonly name: string;
  readonly supportedKinds: readonly RouteGroupKind[];
  readonly attachedRoutes: number;
  readonly conditions: readonly Condition[];
}

export interface GatewayStatus {
  readonly addresses: readonly GatewayAddress[];
  readonly conditions: readonly Condition[];
  readonly listeners: readonly ListenerStatus[];
}

/** Each of our Gateways' status: its addresses, its conditions and its listeners' attachedRoutes. */
export function gatewayStatusesOf(
  gateways: ReadonlyMap<string, GatewayView>,
  extra: {
    readonly insecure: ReadonlySet<string>;
    /** Per Gateway with a backend client certificate, its ResolvedRefs condition. */
    readonly backendClients: ReadonlyMap<string, { readonly condition: Condition }>;
  },
  attachedRoutes: ReadonlyMap<string, ReadonlySet<string>>,
  now: number | undefined,
): Map<string, GatewayStatus> {
  const statuses = new Map<string, GatewayStatus>();
  for (const [key, gateway] of gateways) {
    statuses.set(key, {
      addresses: gateway.addresses,
      conditions: stamped(gatewayConditions(key, gateway, extra), now),
      listeners: gateway.listeners.map((listener) => ({
        name: listener.name,
        supportedKinds: listener.supportedKinds,
        attachedRoutes: attachedRoutes.get(`${key}\n${listener.name}`)?.size ?? 0,
        conditions: stamped(listener.conditions, now),
      })),
    });
  }
  return statuses;
}

/** A Gateway's own conditions, InsecureFrontendValidationMode and its backend client certificate's ResolvedRefs. */
function gatewayConditions(
  key: string,
  gateway: GatewayView,
  extra: Parameters<typeof gatewayStatusesOf>[1],
): readonly Condition[] {
  const backendClient = extra.backendClients.get(key)?.condition;
  return [
    ...gateway.conditions,
    ...(extra.insecure.has(key) ? [insecureCondition(gateway.conditions)] : []),
    ...(backendClient ? [backendClient] : []),
  ];
}

/**
 * Gateway condition InsecureFrontendValidationMode: True, reason ConfigurationChanged, while some port lets
 * clients in without a valid certificate (AllowInsecureFallback); removed once none does (object-status.ts).
 */
function insecureCondition(conditions: readonly Condition[]): Condition {
  return condition(
    "InsecureFrontendValidationMode",
    true,
    "ConfigurationChanged",
    "client certificate validation allows insecure fallback: clients without a valid certificate are let in",
    conditions[0]?.observedGeneration,
  );
}
