import type { IpFamily } from "../../../lib/ip.js";
import { type EndpointRecord, endpointAddress, type FamilyRecord } from "../../../store/records.js";
import { servicePort } from "../../../store/services.js";
import type { IpFamilyPolicy } from "../settings/config.js";
import type { ServedRoute } from "../snapshot/served-routes.js";
import { type SelectSteering, steeringPlan } from "../steering/plan.js";
import type {
  Backend,
  BackendCandidate,
  ClusterChoice,
  FamilyChoice,
  Selection,
  Tier,
  TierName,
  ZoneHints,
} from "./selection.js";

export interface SelectPolicy {
  readonly ipFamily: IpFamilyPolicy;
  /** ROUTER_CLUSTER: this router's own cluster, tried first. */
  readonly cluster: string | undefined;
  /** ROUTER_ZONE: applied within the own cluster only, with kube-proxy's hint rule. */
  readonly zone: string | undefined;
  /** CLUSTER_STEERING and the steering state; without it every Service is local-first. */
  readonly steering?: SelectSteering | undefined;
  /** The runtime opens TLS to backends (RoutingDeps.backendTls); without it `https` backends are left out. */
  readonly backendTls?: boolean | undefined;
}

const PREFERRED: Record<IpFamilyPolicy, IpFamily> = {
  PreferIPv4: "ipv4",
  PreferIPv6: "ipv6",
  IPv4: "ipv4",
  IPv6: "ipv6",
};

/**
 * The family to use for one cluster's record. A family with no endpoints is unusable; the strict
 * policies never switch family; the Prefer* policies take a family that is not in fallback (ready
 * endpoints) over one in fallback (only serving-terminating endpoints), then the preferred family.
 */
export function chooseFamily(
  record: Readonly<Record<IpFamily, FamilyRecord>>,
  policy: IpFamilyPolicy,
): FamilyChoice {
  const preferred = PREFERRED[policy];
  const other: IpFamily = preferred === "ipv4" ? "ipv6" : "ipv4";
  const first = record[preferred];
  const second = record[other];
  const strict = policy === "IPv4" || policy === "IPv6";
  if (strict) {
    if (first.endpoints.length === 0) {
      return { family: undefined, fallback: false, reason: `${policy} only and no ${preferred} endpoints` };
    }
    return { family: preferred, fallback: first.fallback, reason: `${policy} only` };
  }
  const firstUsable = first.endpoints.length > 0;
  const secondUsable = second.endpoints.length > 0;
  if (!firstUsable && !secondUsable) return { family: undefined, fallback: false, reason: "no endpoints" };
  if (!firstUsable) return { family: other, fallback: second.fallback, reason: `no ${preferred} endpoints` };
  if (!secondUsable) return { family: preferred, fallback: first.fallback, reason: `preferred (${policy})` };
  if (first.fallback && !second.fallback) {
    return { family: other, fallback: false, reason: `${preferred} only has terminating endpoints` };
  }
  return { family: preferred, fallback: first.fallback, reason: `preferred (${policy})` };
}

/**
 * kube-proxy's topology-hint rule (KEP-2433, "Topology Aware Routing"): use hints only when every
 * endpoint carries them, then keep the endpoints hinted for our zone; if none is, ignore the hints.
 */
export function zoneSubset(
  endpoints: readonly EndpointRecord[],
  zone: string | undefined,
): { readonly endpoints: readonly EndpointRecord[]; readonly hints: ZoneHints } {
  if (zone === undefined) return { endpoints, hints: "no-zone-configured" };
  for (const endpoint of endpoints) {
    if (!endpoint.forZones || endpoint.forZones.length === 0) {
      return { endpoints, hints: "not-every-endpoint-hinted" };
    }
  }
  const inZone = endpoints.filter((endpoint) => endpoint.forZones?.includes(zone) === true);
  if (inZone.length === 0) return { endpoints, hints: "no-endpoint-for-zone" };
  return { endpoints: inZone, hints: "applied" };
}

/**
 * Every cluster of a served route that has a record for the Service port a backendRef names, in the route's
 * cluster order: each backend of a route resolves against the service records of the clusters that publish it.
 */
export function backendCandidates(served: ServedRoute, service: string, port: number): BackendCandidate[] {
  const candidates: BackendCandidate[] = [];
  for (const view of served.clusters) {
    const record = view.servicesV2.get(service);
    const backends = record && servicePort(record, port);
    if (backends) {
      candidates.push({
        cluster: view.name,
        stale: view.stale,
        service,
        backends,
        // A GRPCRoute's backends speak HTTP/2, over TLS where the port's BackendTLSPolicy says (kept `https`).
        protocol:
          served.route.source === "grpcroute" && backends.protocol !== "https" ? "h2c" : backends.protocol,
        tls: backends.tls,
        gateway: backends.tls ? soleGateway(served) : undefined,
        steering: record.steering,
      });
    }
  }
  return candidates;
}

/**
 * Builds the ordered tiers for one Service port across clusters: own zone, own cluster, every other
 * cluster, then terminating endpoints.
 */
export function selectTiers(
  service: string,
  candidates: readonly BackendCandidate[],
  policy: SelectPolicy,
): Selection {
  const clusters: ClusterChoice[] = [];
  const localEndpoints: ClusterEndpoints[] = [];
  const remote: Backend[] = [];
  const seen = new Set<string>();
  const local = (candidate: BackendCandidate) =>
    policy.cluster !== undefined && candidate.cluster === policy.cluster;
  for (const candidate of candidates) {
    const choice = chooseFamily(candidate.backends, policy.ipFamily);
    clusters.push({
      ...choice,
      cluster: candidate.cluster,
      service: candidate.service,
      stale: candidate.stale,
      local: local(candidate),
    });
    if (choice.family === undefined) continue;
    const endpoints = candidate.backends[choice.family].endpoints;
    if (local(candidate)) localEndpoints.push({ candidate, endpoints, fallback: choice.fallback });
  }
  const tiers: Tier[] = [];
  // Terminating endpoints (a family in fallback) come after every ready endpoint of every cluster:
  // locality never outranks readiness, as kube-proxy only uses terminating endpoints when no ready one is left.
  const fallbackEndpoints: ClusterEndpoints[] = [];
  const zoneHints = pushLocalTiers(localEndpoints[0], policy, tiers, fallbackEndpoints, seen);
  for (const candidate of candidates) {
    if (local(candidate)) continue;
    const choice = clusters.find((c) => c.cluster === candidate.cluster);
    if (choice?.family === undefined) continue;
    const endpoints = candidate.backends[choice.family].endpoints;
    if (choice.fallback) fallbackEndpoints.push({ candidate, endpoints, fallback: true });
    // A loop, not push(...): a spread of a large list overflows the stack (store/records.ts bounds it too).
    else for (const backend of toBackends(candidate, endpoints, seen)) remote.push(backend);
  }
  pushTier(tiers, policy.cluster === undefined ? "all" : "remote", remote);
  pushTier(
    tiers,
    "fallback",
    fallbackEndpoints.flatMap(({ candidate, endpoints }) => toBackends(candidate, endpoints, seen)),
  );
  return { service, tiers, clusters, zoneHints, addresses: [...seen], unresolved: candidates.length === 0 };
}

/** One cluster's endpoints of the family chosen; `fallback`: only terminating ones are left. */
interface ClusterEndpoints {
  readonly candidate: BackendCandidate;
  readonly endpoints: readonly EndpointRecord[];
  readonly fallback: boolean;
}

/**
 * The local cluster's tiers (its zone's endpoints first when zone hints apply), or its terminating endpoints
 * put aside for the fallback tier; what became of zone hints.
 */
function pushLocalTiers(
  local: ClusterEndpoints | undefined,
  policy: SelectPolicy,
  tiers: Tier[],
  fallbackEndpoints: ClusterEndpoints[],
  seen: Set<string>,
): ZoneHints {
  if (!local) return "no-local-cluster";
  const { candidate, endpoints } = local;
  if (local.fallback) {
    fallbackEndpoints.push(local);
    return policy.zone !== undefined ? "fallback-endpoints" : "no-zone-configured";
  }
  const subset = zoneSubset(endpoints, policy.zone);
  if (subset.hints === "applied")
    pushTier(tiers, "local-zone", toBackends(candidate, subset.endpoints, seen));
  pushTier(tiers, "local", toBackends(candidate, endpoints, seen));
  return subset.hints;
}

/** Where one request of a served route goes: the backendRef `backend` of rule `rule`. */
export type SelectFor = (served: ServedRoute, rule: number, backend: number) => Selection;

/**
 * selectTiers per (route, rule, backendRef), memoised on the served route (which lives as long as its
 * snapshot's routes), so whether a backendRef resolves in any cluster is decided once per snapshot; an
 * invalid backendRef has no selection (an empty, unresolved one).
 */
export function createSelector(policy: SelectPolicy): SelectFor {
  const cache = new WeakMap<ServedRoute, Selection[][]>();
  const unresolved = selectTiers("", [], policy);
  return (served, rule, backend) => {
    let byRule = cache.get(served);
    if (!byRule) {
      byRule = [];
      cache.set(served, byRule);
    }
    let byBackend = byRule[rule];
    if (!byBackend) {
      byBackend = [];
      byRule[rule] = byBackend;
    }
    let selection = byBackend[backend];
    if (!selection) {
      const ref = served.route.rules[rule]?.backends[backend];
      selection =
        ref && "service" in ref
          ? { ...steerable(served, ref.service, ref.port), route: { id: served.route.id, rule } }
          : unresolved;
      byBackend[backend] = selection;
    }
    return selection;
  };

  function steerable(served: ServedRoute, service: string, port: number): Selection {
    const found = backendCandidates(served, service, port);
    // Never cleartext to a port whose BackendTLSPolicy asks for TLS: a runtime without it leaves them out, and
    // every runtime a GRPCRoute's (TLS to pods is HTTP/1.1: gRPC needs HTTP/2 over it, not opened yet).
    const carried = policy.backendTls === true && served.route.source !== "grpcroute";
    const candidates = carried ? found : found.filter((candidate) => candidate.protocol !== "https");
    if (candidates.length === 0 && found.length > 0) {
      return { ...selectTiers(service, [], policy), unresolved: false, backendTlsRefused: true };
    }
    const selection = selectTiers(service, candidates, policy);
    const plan = policy.steering && steeringPlan(selection, candidates, policy.steering);
    return plan ? { ...selection, steering: plan } : selection;
  }
}

function pushTier(tiers: Tier[], name: TierName, backends: readonly Backend[]): void {
  if (backends.length > 0) tiers.push({ name, backends });
}

/** Backends not already placed in an earlier tier: the same pod IP listed twice is tried once. */
function toBackends(
  { cluster, protocol, tls, gateway }: BackendCandidate,
  endpoints: readonly EndpointRecord[],
  seen: Set<string>,
): Backend[] {
  const backends: Backend[] = [];
  for (const endpoint of endpoints) {
    const address = endpointAddress(endpoint);
    if (seen.has(address)) continue;
    seen.add(address);
    // track set (undefined) on every backend: steered copies keep the same shape (steering/plan.ts).
    backends.push({
      address,
      ip: endpoint.ip,
      port: endpoint.port,
      cluster,
      protocol,
      tls,
      gateway,
      track: undefined,
    });
  }
  return backends;
}

/** The one Gateway a route is attached to (its listeners'), undefined for none or several. */
function soleGateway(served: ServedRoute): string | undefined {
  const first = served.route.listeners?.[0]?.gateway;
  return served.route.listeners?.every((listener) => listener.gateway === first) ? first : undefined;
}
