import { createHash } from "node:crypto";
import { byCodeUnits } from "../../../lib/code-unit-order.js";
import { BACKEND_TLS_SCHEMA_VERSION, type BackendTlsPolicyRecord } from "../../../store/backend-tls.js";
import { serviceId } from "../../../store/names.js";
import type { RouteRecord } from "../../../store/routes.js";
import type { KubeConfigMap } from "../ca-bundles.js";
import type { KubeService } from "../kube-objects.js";
import type { BackendTLSPolicy } from "./backend-tls-objects.js";
import { type ValidationOutcome, validationOf } from "./backend-tls-validation.js";
import { type Condition, condition } from "./conditions.js";
import { creationTimeOf, GATEWAY_GROUP, keyOf, namespaceOf } from "./objects.js";
import type { Problem } from "./translate.js";

/** PolicyAncestorStatus (Gateway API v1): a policy's conditions toward one Gateway of ours. */
export interface PolicyAncestorStatus {
  readonly ancestorRef: {
    readonly group: string;
    readonly kind: string;
    readonly namespace: string;
    readonly name: string;
  };
  readonly controllerName: string;
  readonly conditions: readonly Condition[];
}

export interface BackendTlsInput {
  readonly controllerName: string;
  readonly policies: readonly BackendTLSPolicy[];
  readonly configMaps: readonly KubeConfigMap[];
  readonly services: readonly KubeService[];
  /** The routes to publish: their listeners name our Gateways, their backends the Services they reach. */
  readonly routes: Iterable<RouteRecord>;
}

export interface BackendTlsTranslation {
  /** The policies in force whose validation is usable, one record each, sorted by id. */
  readonly records: readonly BackendTlsPolicyRecord[];
  /**
   * Service id → port number → the policy in force there. A port whose policy has no record (it is not
   * usable) still names it: the router then refuses the port rather than speak cleartext to it.
   */
  readonly ports: ReadonlyMap<string, ReadonlyMap<number, string>>;
  /** Every policy given, by `namespace/name`: our `status.ancestors` (empty: none of ours reaches it). */
  readonly statuses: ReadonlyMap<string, readonly PolicyAncestorStatus[]>;
  readonly problems: readonly Problem[];
}

/**
 * BackendTLSPolicies → where routers open TLS to pods and how they verify them (Gateway API v1). A policy
 * applies to the ports of the Services its targetRefs name (kind Service, its namespace): to the port its
 * sectionName names, else to every port; a policy with a sectionName takes its port from one without. Of
 * several policies with the same target and sectionName the oldest, then the first by namespace/name, is in
 * force, the others Accepted=False/Conflicted. Its ancestors are our Gateways whose routes reach one of its
 * Services. Pure.
 */
export function translateBackendTlsPolicies(input: BackendTlsInput): BackendTlsTranslation {
  const policies = [...input.policies].sort(
    (a, b) => creationTimeOf(a.metadata) - creationTimeOf(b.metadata) || byCodeUnits(keyOf(a), keyOf(b)),
  );
  const configMaps = new Map(input.configMaps.map((item) => [keyOf(item), item]));
  const winners = new Map<string, BackendTLSPolicy>();
  const conflicted = new Map<string, string>();
  for (const policy of policies) {
    for (const target of targetsOf(policy)) {
      const held = winners.get(target.key);
      if (held === undefined) winners.set(target.key, policy);
      else conflicted.set(keyOf(policy), keyOf(held));
    }
  }
  const outcomes = new Map(policies.map((policy) => [keyOf(policy), validationOf(policy, configMaps)]));
  const gatewaysOf = gatewaysByService(input.routes);
  const statuses = new Map<string, PolicyAncestorStatus[]>();
  const problems: Problem[] = [];
  const records: BackendTlsPolicyRecord[] = [];
  for (const policy of [...policies].sort((a, b) => byCodeUnits(keyOf(a), keyOf(b)))) {
    const key = keyOf(policy);
    const outcome = outcomes.get(key) as ValidationOutcome;
    const loser = conflicted.get(key);
    const conditions = conditionsOf(outcome, loser, policy.metadata.generation);
    const gateways = new Set(
      targetsOf(policy).flatMap((target) => [...(gatewaysOf.get(target.service) ?? [])]),
    );
    statuses.set(
      key,
      [...gateways]
        .sort(byCodeUnits)
        .map((gateway) => ancestorStatus(gateway, input.controllerName, conditions)),
    );
    if (!outcome.ok) problems.push({ object: `BackendTLSPolicy ${key}`, reason: outcome.message });
    if (loser !== undefined)
      problems.push({ object: `BackendTLSPolicy ${key}`, reason: `${loser} takes precedence` });
    const inForce = [...winners.values()].includes(policy);
    if (outcome.ok && inForce) records.push(recordOf(key, outcome.validation));
  }
  return { records, ports: portsInForce(winners, input.services), statuses, problems };
}

interface Target {
  /** `<service id>\n<sectionName>`: what two policies conflict on. */
  readonly key: string;
  readonly service: string;
  readonly sectionName: string;
}

function targetsOf(policy: BackendTLSPolicy): Target[] {
  const namespace = namespaceOf(policy);
  return (policy.spec.targetRefs ?? [])
    .filter((ref) => (ref.group ?? "") === "" && ref.kind === "Service")
    .map((ref) => {
      const service = serviceId(namespace, ref.name);
      const sectionName = ref.sectionName ?? "";
      return { key: `${service}\n${sectionName}`, service, sectionName };
    });
}

function portsInForce(
  winners: ReadonlyMap<string, BackendTLSPolicy>,
  services: readonly KubeService[],
): Map<string, Map<number, string>> {
  const byId = new Map(
    services.map((service) => [serviceId(namespaceOf(service), service.metadata.name), service]),
  );
  const ports = new Map<string, Map<number, string>>();
  for (const [key, policy] of winners) {
    const [id = "", sectionName = ""] = key.split("\n");
    const service = byId.get(id);
    for (const port of service?.spec?.ports ?? []) {
      if ((port.protocol ?? "TCP") !== "TCP" || (sectionName !== "" && (port.name ?? "") !== sectionName))
        continue;
      const forService = ports.get(id) ?? new Map<number, string>();
      // A sectionName policy holds its port against one for the whole Service.
      if (sectionName !== "" || !forService.has(port.port)) forService.set(port.port, keyOf(policy));
      ports.set(id, forService);
    }
  }
  return ports;
}

/** Service id → our Gateways (`namespace/name`) whose routes send to it (backends and mirrors). */
function gatewaysByService(routes: Iterable<RouteRecord>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const route of routes) {
    const gateways = new Set((route.listeners ?? []).map((listener) => listener.gateway));
    if (gateways.size === 0) continue;
    for (const rule of route.rules) {
      for (const backend of [...rule.backends, ...(rule.filters.mirrors ?? [])]) {
        if (!("service" in backend)) continue;
        const set = out.get(backend.service) ?? new Set<string>();
        for (const gateway of gateways) set.add(gateway);
        out.set(backend.service, set);
      }
    }
  }
  return out;
}

function conditionsOf(
  outcome: ValidationOutcome,
  loser: string | undefined,
  generation: number | null | undefined,
): Condition[] {
  const accepted =
    loser !== undefined
      ? condition(
          "Accepted",
          false,
          "Conflicted",
          `${loser} targets the same and takes precedence`,
          generation,
        )
      : outcome.ok
        ? condition("Accepted", true, "Accepted", "Policy accepted", generation)
        : condition("Accepted", false, outcome.reason, outcome.message, generation);
  const refs = outcome.refs;
  const resolved = refs.resolved
    ? condition("ResolvedRefs", true, "ResolvedRefs", "All references resolved", generation)
    : condition("ResolvedRefs", false, refs.reason, refs.message, generation);
  return [accepted, resolved];
}

function ancestorStatus(
  gateway: string,
  controllerName: string,
  conditions: Condition[],
): PolicyAncestorStatus {
  const [namespace = "", name = ""] = gateway.split("/");
  return {
    ancestorRef: { group: GATEWAY_GROUP, kind: "Gateway", namespace, name },
    controllerName,
    conditions,
  };
}

function recordOf(
  id: string,
  validation: Extract<ValidationOutcome, { ok: true }>["validation"],
): BackendTlsPolicyRecord {
  const content = {
    hostname: validation.hostname,
    subjectAltNames: [...validation.subjectAltNames],
    trust: validation.trust,
  };
  return {
    v: BACKEND_TLS_SCHEMA_VERSION,
    kind: "policy",
    id,
    version: createHash("sha256").update(JSON.stringify(content)).digest("hex"),
    ...content,
  };
}
