import * as v from "valibot";
import { canonicalIp, type IpFamily } from "../../lib/ip.js";
import type { Result } from "../../lib/result.js";
import { endpointIpProblem } from "../../store/records.js";

/**
 * The parts of Service and EndpointSlice (discovery.k8s.io/v1) that edgeslice reads, validated at the
 * boundary. Objects are loose: unknown fields pass through untouched. `null` and absent are treated alike,
 * as the API server and client-node produce both.
 */
const NameSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(253));
const StringMapSchema = v.nullish(v.record(v.string(), v.string()));

const ServiceMetadataSchema = v.looseObject({
  name: NameSchema,
  namespace: v.nullish(NameSchema),
  annotations: StringMapSchema,
  labels: StringMapSchema,
  resourceVersion: v.nullish(v.string()),
  /** A string in raw JSON, a Date from client-node's typed APIs; annotation routes rank by it. */
  creationTimestamp: v.nullish(v.union([v.string(), v.date()])),
});

const ServicePortSpecSchema = v.looseObject({
  name: v.nullish(v.string()),
  port: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535)),
  protocol: v.nullish(v.string()),
  targetPort: v.nullish(v.union([v.number(), v.string()])),
  /** The port's application protocol (app-protocol.ts reads it): `kubernetes.io/h2c` and the like. */
  appProtocol: v.nullish(v.string()),
});

export const KubeServiceSchema = v.looseObject({
  kind: v.nullish(v.string()),
  metadata: ServiceMetadataSchema,
  spec: v.nullish(
    v.looseObject({
      ports: v.nullish(v.array(ServicePortSpecSchema)),
      type: v.nullish(v.string()),
    }),
  ),
});
export type KubeService = v.InferOutput<typeof KubeServiceSchema>;

const ConditionSchema = v.nullish(v.boolean());

const EndpointSchema = v.looseObject({
  addresses: v.array(v.string()),
  conditions: v.nullish(
    v.looseObject({ ready: ConditionSchema, serving: ConditionSchema, terminating: ConditionSchema }),
  ),
  zone: v.nullish(v.string()),
  nodeName: v.nullish(v.string()),
  hints: v.nullish(v.looseObject({ forZones: v.nullish(v.array(v.looseObject({ name: v.string() }))) })),
});

const SlicePortSchema = v.looseObject({
  name: v.nullish(v.string()),
  port: v.nullish(v.number()),
  protocol: v.nullish(v.string()),
});

export const KubeEndpointSliceSchema = v.looseObject({
  kind: v.nullish(v.string()),
  metadata: v.looseObject({
    name: NameSchema,
    namespace: v.nullish(NameSchema),
    labels: StringMapSchema,
    resourceVersion: v.nullish(v.string()),
  }),
  /** "IPv4" | "IPv6" | "FQDN"; kept open so a future type is ignored rather than rejected. */
  addressType: v.string(),
  endpoints: v.nullish(v.array(EndpointSchema)),
  ports: v.nullish(v.array(SlicePortSchema)),
});
export type KubeEndpointSlice = v.InferOutput<typeof KubeEndpointSliceSchema>;

function parseWith<T>(schema: v.GenericSchema<unknown, T>, input: unknown): Result<T> {
  const result = v.safeParse(schema, input);
  if (result.success) return { ok: true, value: result.output };
  const issue = result.issues[0];
  const path = issue ? v.getDotPath(issue) : null;
  return { ok: false, error: `${path ?? "(root)"}: ${issue?.message ?? "invalid"}` };
}

export function parseService(input: unknown): Result<KubeService> {
  return parseWith(KubeServiceSchema, input);
}

export function parseEndpointSlice(input: unknown): Result<KubeEndpointSlice> {
  return parseWith(KubeEndpointSliceSchema, input);
}

/** `metadata.namespace`, which manifests may omit: the API server's default then applies. */
export function namespaceOf(object: { metadata: { namespace?: string | null } }): string {
  return object.metadata.namespace ?? "default";
}

/** kubernetes.io/service-name: the label that ties a slice to its Service (KEP-0752). */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
/** Multi-cluster Services API (KEP-1645): the cluster a slice was imported from. */
export const SOURCE_CLUSTER_LABEL = "multicluster.kubernetes.io/source-cluster";

/** Rule 2: the slice's address type decides the family; FQDN (deprecated) and unknown types add nothing. */
export function familyOfAddressType(addressType: string): IpFamily | undefined {
  if (addressType === "IPv4") return "ipv4";
  if (addressType === "IPv6") return "ipv6";
  return undefined;
}

/**
 * Why an endpoint's first address is dropped (rule 4), or undefined when it is kept: it does not parse (a
 * zone id, `999.1.1.1`, a leading zero), is of the other family, or is an address no record may hold
 * (store/records.ts endpointIpProblem: unspecified, link-local, multicast, broadcast).
 */
export function endpointAddressProblem(address: string | undefined, family: IpFamily): string | undefined {
  if (address === undefined) return "has no address";
  const parsed = canonicalIp(address);
  if (parsed === undefined) return `address "${address.slice(0, 64)}" is not an IP address`;
  if (parsed.family !== family) return `address "${address}" is not ${family} (the slice's address type)`;
  const problem = endpointIpProblem(parsed.ip, family);
  return problem === undefined ? undefined : `address "${address}" ${problem}`;
}

/** Rule 3: a slice port's number, when set, must be a TCP/UDP port (1-65535); otherwise the port adds nothing. */
export function slicePortProblem(port: { readonly name?: string | null; readonly port?: number | null }) {
  const number = port.port;
  if (number === undefined || number === null) return undefined;
  if (Number.isInteger(number) && number >= 1 && number <= 65535) return undefined;
  return `port "${port.name ?? ""}" has number ${number}, not 1-65535`;
}

/**
 * What translation will drop of one slice and why, one line per port and endpoint (at most `limit`, then a
 * count of the rest): for the sync to log once per slice while it stays so (lib/warn-once.ts), instead of
 * publishing fewer endpoints, or none, without a word. The API server refuses such slices, so they come from
 * manifests (`--from`) or a controller writing around validation. Empty for a slice of another address type.
 */
export function endpointSliceProblems(slice: KubeEndpointSlice, limit = 10): string[] {
  const family = familyOfAddressType(slice.addressType);
  if (family === undefined) return [];
  const problems: string[] = [];
  let more = 0;
  const note = (problem: string | undefined) => {
    if (problem === undefined) return;
    if (problems.length < limit) problems.push(problem);
    else more++;
  };
  for (const port of slice.ports ?? []) note(slicePortProblem(port));
  (slice.endpoints ?? []).forEach((endpoint, index) => {
    const problem = endpointAddressProblem(endpoint.addresses[0], family);
    if (problem !== undefined) note(`endpoint ${index} ${problem}`);
  });
  if (more > 0) problems.push(`and ${more} more`);
  return problems;
}
