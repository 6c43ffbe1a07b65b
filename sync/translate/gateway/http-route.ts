import * as v from "valibot";
import { byCodeUnits } from "../../../lib/code-unit-order.js";
import {
  ROUTE_SCHEMA_VERSION,
  type RouteListener,
  type RouteRecord,
  RouteRecordSchema,
  routeId,
} from "../../../store/routes.js";
import { type Attachment, attachToGateway } from "./attachment.js";
import type { BackendContext } from "./backends.js";
import { type Condition, condition, type RouteParentStatus } from "./conditions.js";
import { type HostnameSet, unionHostnames } from "./hostnames.js";
import type { GatewayView } from "./listeners.js";
import {
  creationTimeOf,
  GATEWAY_GROUP,
  type HTTPRoute,
  type KubeRule,
  namespaceOf,
  type ParentRef,
  type RouteKindName,
} from "./objects.js";
import { type RuleTranslation, translateRule } from "./rules.js";

export interface HttpRouteContext {
  readonly controllerName: string;
  /** Our Gateways (of a GatewayClass with our controllerName), by `namespace/name`. */
  readonly gateways: ReadonlyMap<string, GatewayView>;
  readonly namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>;
  readonly backends: BackendContext;
}

export interface HttpRouteTranslation {
  /** Present when at least one of our parents accepted the route. */
  readonly record: RouteRecord | undefined;
  /** One entry per parentRef to one of our Gateways, in spec order (RouteParentStatus). */
  readonly parents: readonly RouteParentStatus[];
  /** Listeners the route attached to, per Gateway key (for attachedRoutes). */
  readonly attached: readonly { readonly gateway: string; readonly listeners: readonly string[] }[];
  readonly problems: readonly string[];
}

/** The CRD's default rules: one rule matching every request (PathPrefix "/"), without backends. */
const DEFAULT_RULES = [{}];

/**
 * What differs between the route kinds translated here: HTTPRoute, and GRPCRoute (grpc-route.ts), whose rules
 * become the same store rules. The kind names the route in listeners' supportedKinds and in ReferenceGrants.
 */
export interface RouteKindSpec<Rule> {
  readonly kind: RouteKindName;
  readonly source: "httproute" | "grpcroute" | "tlsroute";
  readonly translateRule: (rule: Rule, namespace: string, context: BackendContext) => RuleTranslation;
}

const HTTP_ROUTE_KIND: RouteKindSpec<KubeRule> = { kind: "HTTPRoute", source: "httproute", translateRule };

/** An HTTPRoute, or a route of another kind with the same parents, hostnames and rules of its own. */
export interface RouteObject<Rule> {
  readonly metadata: HTTPRoute["metadata"];
  readonly spec: {
    readonly parentRefs?: readonly ParentRef[] | null;
    readonly hostnames?: readonly string[] | null;
    readonly rules?: readonly Rule[] | null;
  };
}

/**
 * One HTTPRoute → its route record (hostnames already intersected with the listeners it attached to, over
 * all its accepted parents) and its status toward each of our parents. Parents that are not ours (another
 * kind, another controller's Gateway, a Gateway that does not exist) get no entry: "Implementations of this
 * API can only populate Route status for the Gateways/parent resources they are responsible for."
 */
export function translateHttpRoute(route: HTTPRoute, context: HttpRouteContext): HttpRouteTranslation {
  return translateRouteOfKind(route, context, HTTP_ROUTE_KIND);
}

/** translateHttpRoute for a route of `kind` (grpc-route.ts's GRPCRoute). */
export function translateRouteOfKind<Rule extends object>(
  route: RouteObject<Rule>,
  context: HttpRouteContext,
  kind: RouteKindSpec<Rule>,
): HttpRouteTranslation {
  const namespace = namespaceOf(route);
  const generation = route.metadata.generation;
  const rules: readonly Rule[] =
    route.spec.rules && route.spec.rules.length > 0 ? route.spec.rules : (DEFAULT_RULES as Rule[]);
  const translated = rules.map((rule) => kind.translateRule(rule, namespace, context.backends));
  const valid = translated.filter((item) => item.ok);
  const outcome = ruleProblemsOf(translated);
  const { problems, dropped } = outcome;
  const resolvedRefs = resolvedRefsCondition(valid, generation);

  const parents: RouteParentStatus[] = [];
  const attached: { gateway: string; listeners: readonly string[] }[] = [];
  const served: HostnameSet[] = [];
  const listeners = new Map<string, RouteListener>();
  for (const parentRef of route.spec.parentRefs ?? []) {
    if ((parentRef.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (parentRef.kind ?? "Gateway") !== "Gateway")
      continue;
    const gatewayKey = `${parentRef.namespace ?? namespace}/${parentRef.name}`;
    const gateway = context.gateways.get(gatewayKey);
    if (!gateway) continue;
    const attachment = attachToGateway(parentRef, gateway, route, context.namespaceLabels, kind.kind);
    const accepted = acceptedCondition(attachment, valid.length > 0, outcome, generation);
    if (accepted.status === "True") {
      served.push(attachment.hostnames);
      attached.push({ gateway: gatewayKey, listeners: attachment.listeners.map((item) => item.name) });
      for (const listener of attachment.listeners) addListener(listeners, gatewayKey, listener);
    }
    const conditions = [accepted, resolvedRefs];
    if (accepted.status === "True" && dropped.length > 0) {
      const message = `Dropped Rule ${dropped.join("; ")}`;
      conditions.push(condition("PartiallyInvalid", true, "UnsupportedValue", message, generation));
    }
    parents.push({ parentRef: echoParentRef(parentRef), controllerName: context.controllerName, conditions });
  }

  if (served.length === 0) return { record: undefined, parents, attached, problems };
  const hostnames = unionHostnames(served);
  const checked = v.safeParse(RouteRecordSchema, {
    v: ROUTE_SCHEMA_VERSION,
    id: routeId(kind.source, namespace, route.metadata.name),
    source: kind.source,
    createdAt: creationTimeOf(route.metadata),
    hostnames: hostnames === "any" ? [] : [...hostnames],
    wildcard: "suffix",
    listeners: [...listeners].sort(([a], [b]) => byCodeUnits(a, b)).map(([, item]) => item),
    rules: valid.map((item) => item.rule),
  } satisfies RouteRecord);
  if (checked.success) return { record: checked.output, parents, attached, problems };
  problems.push(`route record does not validate: ${checked.issues[0]?.message ?? "invalid"}`);
  return { record: undefined, parents, attached, problems };
}

/**
 * Accepted toward one parent: False with the attachment's reason when it did not attach, False with the
 * first dropped rule's reason when no rule can be served, else True.
 */
function acceptedCondition(
  attachment: Attachment,
  servable: boolean,
  { dropped, droppedReason }: RuleProblems,
  generation: number | null | undefined,
): Condition {
  if (!attachment.accepted)
    return condition("Accepted", false, attachment.reason, attachment.message, generation);
  if (!servable) {
    const message = `no rule can be served: ${dropped.join("; ")}`;
    return condition("Accepted", false, droppedReason, message, generation);
  }
  return condition("Accepted", true, "Accepted", attachment.message, generation);
}

interface RuleProblems {
  readonly problems: string[];
  readonly dropped: readonly string[];
  readonly droppedReason: "UnsupportedValue" | "IncompatibleFilters";
}

/**
 * What the rules that cannot be served say: each dropped rule (its reason the first one's, for the Accepted
 * condition when none is left) and each field a served rule ignores.
 */
function ruleProblemsOf(translated: readonly RuleTranslation[]): RuleProblems {
  const problems: string[] = [];
  const dropped: string[] = [];
  let droppedReason: "UnsupportedValue" | "IncompatibleFilters" = "UnsupportedValue";
  translated.forEach((item, index) => {
    if (!item.ok && dropped.length === 0) droppedReason = item.reason;
    if (!item.ok) dropped.push(`rule ${index} (${item.message})`);
    else for (const field of item.ignored) problems.push(`rule ${index}: ${field} are not applied`);
  });
  if (dropped.length > 0) problems.push(`dropped ${dropped.join("; ")}`);
  return { problems, dropped, droppedReason };
}

/**
 * One entry per (Gateway, port, listener hostname), keyed so that sorting the keys sorts by Gateway, port,
 * then hostname: two listeners of a Gateway that share both serve the union of their hostnames.
 */
function addListener(
  listeners: Map<string, RouteListener>,
  gateway: string,
  attached: {
    readonly port: number;
    readonly listenerHostname: string | undefined;
    readonly hostnames: HostnameSet;
    readonly terminatesTls?: boolean;
  },
): void {
  const key = `${gateway} ${String(attached.port).padStart(5, "0")} ${attached.listenerHostname ?? ""}`;
  const before = listeners.get(key);
  const hostnames = unionHostnames([
    ...(before ? [before.hostnames.length === 0 ? ("any" as const) : before.hostnames] : []),
    attached.hostnames,
  ]);
  listeners.set(key, {
    gateway,
    port: attached.port,
    ...(attached.listenerHostname ? { listenerHostname: attached.listenerHostname } : {}),
    hostnames: hostnames === "any" ? [] : [...hostnames],
    ...(attached.terminatesTls ? { tlsMode: "Terminate" as const } : {}),
  });
}

/**
 * ResolvedRefs: True, or False with the reason of the first unresolved backendRef in rule order
 * (RouteConditionType ResolvedRefs: RefNotPermitted, InvalidKind, BackendNotFound, UnsupportedProtocol).
 */
function resolvedRefsCondition(
  valid: readonly Extract<RuleTranslation, { ok: true }>[],
  generation: number | null | undefined,
): Condition {
  const problems = valid.flatMap((item) => item.refProblems);
  const first = problems[0];
  if (!first) return condition("ResolvedRefs", true, "ResolvedRefs", "All references resolved", generation);
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : "";
  return condition("ResolvedRefs", false, first.reason, `${first.message}${more}`, generation);
}

/** The parentRef as written, with the group and kind the API server defaults. */
function echoParentRef(parentRef: ParentRef): RouteParentStatus["parentRef"] {
  return {
    group: parentRef.group ?? GATEWAY_GROUP,
    kind: parentRef.kind ?? "Gateway",
    ...(parentRef.namespace ? { namespace: parentRef.namespace } : {}),
    name: parentRef.name,
    ...(parentRef.sectionName ? { sectionName: parentRef.sectionName } : {}),
    ...(parentRef.port ? { port: parentRef.port } : {}),
  };
}
