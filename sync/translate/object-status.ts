import type { PolicyAncestorStatus } from "./gateway/backend-tls-policies.js";
import {
  type Condition,
  mergeConditions,
  mergeRouteParents,
  type RouteParentStatus,
} from "./gateway/conditions.js";
import type { GatewayStatus } from "./gateway/gateway-status.js";
import type { IngressStatus } from "./ingress/translate.js";

/**
 * The status subresource to write for one object: its current status with what we own merged in
 * (conditions of our types, our `status.parents` entries, our listeners, Ingress `loadBalancer`), everything
 * else kept as it is. Pure; `now` (ISO) stamps conditions whose status changed. Compare the result with the
 * current status (sameStatus) and write only when they differ.
 */
type Status = Record<string, unknown>;

export function statusOf(object: unknown): Status {
  const status = (object as { status?: unknown } | undefined)?.status;
  return typeof status === "object" && status !== null ? (status as Status) : {};
}

function conditionsOf(value: unknown): Condition[] {
  return Array.isArray(value) ? (value as Condition[]) : [];
}

export function gatewayClassStatus(
  object: unknown,
  desired: { readonly conditions: readonly Condition[] },
  now: string,
): Status {
  const current = statusOf(object);
  return {
    ...current,
    conditions: mergeConditions(conditionsOf(current.conditions), desired.conditions, now),
  };
}

/**
 * Gateway conditions merged; `addresses` and `listeners` are ours entirely (one entry per listener of the
 * spec); no address known leaves `addresses` out.
 */
export function gatewayStatus(object: unknown, desired: GatewayStatus, now: string): Status {
  const current = statusOf(object);
  const listeners = Array.isArray(current.listeners)
    ? (current.listeners as { name?: unknown; conditions?: unknown }[])
    : [];
  const { addresses: _dropped, ...rest } = current;
  return {
    ...rest,
    ...(desired.addresses.length > 0
      ? { addresses: desired.addresses.map((item) => ({ type: item.type, value: item.value })) }
      : {}),
    conditions: mergeConditions(
      withoutDropped(conditionsOf(current.conditions), desired.conditions),
      desired.conditions,
      now,
    ),
    listeners: desired.listeners.map((listener) => ({
      name: listener.name,
      supportedKinds: listener.supportedKinds.map((kind) => ({ group: kind.group, kind: kind.kind })),
      attachedRoutes: listener.attachedRoutes,
      conditions: mergeConditions(
        conditionsOf(listeners.find((item) => item.name === listener.name)?.conditions),
        listener.conditions,
        now,
      ),
    })),
  };
}

/**
 * Gateway conditions only edgeslice sets that go away when their cause does (Gateway API: "This condition is
 * removed as soon as FrontendValidationModeType is changed back to AllowValidOnly"); a Gateway's own
 * ResolvedRefs speaks of its backend client certificate only, and goes once it has none.
 */
const DROPPED_WHEN_UNSET: ReadonlySet<string> = new Set(["InsecureFrontendValidationMode", "ResolvedRefs"]);

function withoutDropped(existing: readonly Condition[], desired: readonly Condition[]): Condition[] {
  const wanted = new Set(desired.map((item) => item.type));
  return existing.filter((item) => !DROPPED_WHEN_UNSET.has(item.type) || wanted.has(item.type));
}

/** Our entries of `status.parents` replaced, other controllers' kept (mergeRouteParents). */
export function httpRouteStatus(
  object: unknown,
  desired: readonly RouteParentStatus[],
  controllerName: string,
  now: string,
): Status {
  const current = statusOf(object);
  const parents = Array.isArray(current.parents) ? (current.parents as RouteParentStatus[]) : [];
  return { ...current, parents: mergeRouteParents(parents, desired, controllerName, now) };
}

/**
 * PolicyStatus (Gateway API v1): our entries of `status.ancestors` replaced, other controllers' kept, each
 * merged per ancestorRef as route parents are per parentRef (mergeRouteParents).
 */
export function policyStatus(
  object: unknown,
  desired: readonly PolicyAncestorStatus[],
  controllerName: string,
  now: string,
): Status {
  const current = statusOf(object);
  const ancestors = Array.isArray(current.ancestors) ? (current.ancestors as PolicyAncestorStatus[]) : [];
  const asParents = (list: readonly PolicyAncestorStatus[]): RouteParentStatus[] =>
    list.map(({ ancestorRef, ...rest }) => ({ parentRef: ancestorRef, ...rest }));
  const merged = mergeRouteParents(asParents(ancestors), asParents(desired), controllerName, now);
  return {
    ...current,
    ancestors: merged.map(({ parentRef, ...rest }) => ({ ancestorRef: parentRef, ...rest })),
  };
}

export function ingressStatus(object: unknown, desired: IngressStatus): Status {
  const current = statusOf(object);
  const ingress = desired.loadBalancer.ingress ?? [];
  return {
    ...current,
    loadBalancer: ingress.length > 0 ? { ingress: ingress.map((item) => ({ ...item })) } : {},
  };
}

/**
 * Equal as the API server stores them: key order does not count, and an empty list, an empty object or an
 * absent field are alike (the API server drops empty optional fields).
 */
export function sameStatus(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map(canonical);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const inner = canonical((value as Record<string, unknown>)[key]);
    if (inner !== undefined) out[key] = inner;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}
