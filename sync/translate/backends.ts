import { type CanonicalIp, canonicalIpWithSortKey, type IpFamily } from "../../lib/ip.js";
import {
  canonicalEndpoint,
  type EndpointRecord,
  endpointIpProblem,
  type FamilyRecord,
} from "../../store/records.js";
import {
  familyOfAddressType,
  type KubeEndpointSlice,
  type KubeService,
  namespaceOf,
  SERVICE_NAME_LABEL,
  SOURCE_CLUSTER_LABEL,
  slicePortProblem,
} from "./kube-objects.js";
import type { PortBackends } from "./types.js";

/**
 * EndpointSlices of one Service → backends per Service port, following the translation rules of docs/design.md.
 * Pure: the same Service and slices (in any order) always give the same result.
 */
export function translateService(service: KubeService, slices: readonly KubeEndpointSlice[]): PortBackends[] {
  const own = slicesOfService(service, slices);
  const parse = memoisedParser();
  return (service.spec?.ports ?? []).map((servicePort) => {
    const port = {
      name: servicePort.name ?? "",
      number: servicePort.port,
      protocol: servicePort.protocol ?? "TCP",
    };
    const winners = dedup(own.flatMap((slice) => candidatesOf(slice, port, parse)));
    return { port, ipv4: familyRecord(winners, "ipv4"), ipv6: familyRecord(winners, "ipv6") };
  });
}

/**
 * Rule 1: same namespace and `kubernetes.io/service-name` label, whoever manages the slice
 * (KEP-0752 lets any controller publish slices for a Service).
 */
export function slicesOfService(
  service: KubeService,
  slices: readonly KubeEndpointSlice[],
): KubeEndpointSlice[] {
  const namespace = namespaceOf(service);
  return slices.filter(
    (slice) =>
      namespaceOf(slice) === namespace &&
      slice.metadata.labels?.[SERVICE_NAME_LABEL] === service.metadata.name,
  );
}

interface ParsedAddress extends CanonicalIp {
  readonly sortKey: string;
}
type AddressParser = (text: string) => ParsedAddress | undefined;

/**
 * Each address is parsed once per translation, not once per Service port. Undefined for text that is not
 * an IP literal, and for an address no record may hold (kube-objects.ts endpointAddressProblem says why).
 */
function memoisedParser(): AddressParser {
  const seen = new Map<string, ParsedAddress | undefined>();
  return (text) => {
    if (seen.has(text)) return seen.get(text);
    let parsed = canonicalIpWithSortKey(text);
    if (parsed && endpointIpProblem(parsed.ip, parsed.family) !== undefined) parsed = undefined;
    seen.set(text, parsed);
    return parsed;
  };
}

interface Candidate {
  readonly family: IpFamily;
  readonly ip: string;
  readonly sortKey: string;
  readonly port: number;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  readonly sliceName: string;
  readonly zone: string | undefined;
  readonly forZones: string[] | undefined;
  readonly sourceCluster: string | undefined;
}

function candidatesOf(
  slice: KubeEndpointSlice,
  servicePort: { readonly name: string; readonly protocol: string },
  parse: AddressParser,
): Candidate[] {
  const family = familyOfAddressType(slice.addressType);
  if (family === undefined) return [];
  const port = targetPortOf(slice, servicePort);
  if (port === undefined) return [];
  const sourceCluster = slice.metadata.labels?.[SOURCE_CLUSTER_LABEL];
  const candidates: Candidate[] = [];
  for (const endpoint of slice.endpoints ?? []) {
    // Rule 4: only addresses[0]. discovery.k8s.io/v1 Endpoint.addresses: "No semantics are defined for
    // additional addresses beyond the first, and kube-proxy does not look at them."
    const first = endpoint.addresses[0];
    const parsed = first === undefined ? undefined : parse(first);
    if (parsed === undefined || parsed.family !== family) continue;
    const conditions = endpoint.conditions;
    candidates.push({
      family,
      ip: parsed.ip,
      sortKey: parsed.sortKey,
      port,
      ready: conditions?.ready ?? true,
      serving: conditions?.serving ?? true,
      terminating: conditions?.terminating ?? false,
      sliceName: slice.metadata.name,
      zone: endpoint.zone ?? undefined,
      forZones: endpoint.hints?.forZones?.map((zone) => zone.name),
      sourceCluster,
    });
  }
  return candidates;
}

/**
 * Rule 3: the slice port with the Service port's name (`""` when unnamed) and protocol (default TCP).
 * The number comes from the slice (it is the resolved target port); missing or zero means "no port".
 */
function targetPortOf(
  slice: KubeEndpointSlice,
  servicePort: { readonly name: string; readonly protocol: string },
): number | undefined {
  const match = (slice.ports ?? []).find(
    (port) => (port.name ?? "") === servicePort.name && (port.protocol ?? "TCP") === servicePort.protocol,
  );
  const number = match?.port;
  if (number === undefined || number === null || slicePortProblem(match ?? {}) !== undefined)
    return undefined;
  return number;
}

/** Rule 5: one copy per (family, ip, port); the best ranked wins, a tie goes to the lexically first slice. */
function dedup(candidates: readonly Candidate[]): Candidate[] {
  const best = new Map<string, Candidate>();
  for (const candidate of candidates) {
    const key = `${candidate.family}|${candidate.ip}|${candidate.port}`;
    const current = best.get(key);
    if (current === undefined || beats(candidate, current)) best.set(key, candidate);
  }
  return [...best.values()];
}

function beats(challenger: Candidate, holder: Candidate): boolean {
  const rank = (candidate: Candidate) => [!candidate.terminating, candidate.ready, candidate.serving];
  const challengerRank = rank(challenger);
  const holderRank = rank(holder);
  for (let index = 0; index < challengerRank.length; index += 1) {
    if (challengerRank[index] !== holderRank[index]) return challengerRank[index] === true;
  }
  // Plain code-unit order, not locale order, so every runtime agrees.
  if (challenger.sliceName !== holder.sliceName) return challenger.sliceName < holder.sliceName;
  // An address listed twice in one slice (not something the EndpointSlice controller does): compare the
  // remaining data so the endpoint order inside the slice does not matter either.
  return topologyKey(challenger) < topologyKey(holder);
}

function topologyKey(candidate: Candidate): string {
  return JSON.stringify([candidate.zone ?? null, candidate.forZones ?? null]);
}

/**
 * Rule 6, read literally: active = endpoints whose `ready` is true, terminating or not. EndpointConditions.ready
 * says an endpoint "should be marked ready if it is serving and not terminating, though this can be overridden
 * in some cases, such as when the associated Service has set the publishNotReadyAddresses flag": there the
 * owner asked for every endpoint to get traffic, so a ready ∧ terminating endpoint stays active (and, being
 * serving ∧ terminating, is also listed as draining). With no ready endpoint, serving ∧ terminating ones carry traffic and the set is marked fallback
 * (KEP-1669 "ProxyTerminatingEndpoints"). An empty family is never marked fallback, so "no endpoints" has one
 * form whatever the conditions of the dropped endpoints were.
 */
function familyRecord(winners: readonly Candidate[], family: IpFamily): FamilyRecord {
  const ofFamily = winners.filter((candidate) => candidate.family === family).sort(byAddress);
  const ready = ofFamily.filter((candidate) => candidate.ready);
  const draining = ofFamily.filter((candidate) => candidate.serving && candidate.terminating);
  const fallback = ready.length === 0 && draining.length > 0;
  return {
    endpoints: (fallback ? draining : ready).map(toRecord),
    fallback,
    draining: draining.map(toRecord),
  };
}

function byAddress(left: Candidate, right: Candidate): number {
  if (left.sortKey !== right.sortKey) return left.sortKey < right.sortKey ? -1 : 1;
  return left.port - right.port;
}

/** Rule 7: zone and hints travel with the endpoint; optional fields are left out when absent. */
const toRecord: (candidate: Candidate) => EndpointRecord = canonicalEndpoint;
