import fc from "fast-check";
import {
  type KubeEndpointSlice,
  type KubeService,
  parseEndpointSlice,
  parseService,
  SERVICE_NAME_LABEL,
  SOURCE_CLUSTER_LABEL,
} from "../../sync/translate/kube-objects.js";

/**
 * Generators of one Service and a pile of EndpointSlices around it, built to collide: a small address pool
 * (so the same pod shows up in several slices), several spellings of one IPv6 address, addresses of the wrong
 * family or not parsable at all, ports that do and do not match, nil conditions, FQDN slices, and slices of
 * other Services or namespaces.
 */
export const NAMESPACE = "ns";
export const SERVICE_NAME = "svc";

/** Each entry is one address; its spellings all canonicalise to the same text. */
const ADDRESS_POOL: readonly (readonly string[])[] = [
  ["10.0.0.1"],
  ["10.0.0.2"],
  ["10.0.0.3"],
  ["192.168.1.10"],
  ["fd00::1", "FD00::1", "fd00:0:0:0:0:0:0:1", "fd00:0000::0001"],
  ["fd00::2", "fd00:0::2"],
  ["2001:db8::a", "2001:DB8:0:0:0:0:0:A"],
  ["::ffff:10.0.0.9"],
  ["not-an-ip"],
  ["10.0.0.01"],
  ["fd00::1%eth0"],
  ["10.1.0.0/16"],
];

const conditionArb = fc.constantFrom(true, false, null, undefined);
const zoneArb = fc.constantFrom("zone-a", "zone-b", undefined);

const endpointArb = (addressIndex: number) =>
  fc
    .record({
      spelling: fc.nat(),
      ready: conditionArb,
      serving: conditionArb,
      terminating: conditionArb,
      zone: zoneArb,
      hints: fc.option(fc.subarray(["zone-a", "zone-b", "zone-c"]), { nil: undefined }),
    })
    .map(({ spelling, ready, serving, terminating, zone, hints }) => {
      const spellings = ADDRESS_POOL[addressIndex] ?? ["10.0.0.1"];
      const conditions: Record<string, boolean | null> = {};
      if (ready !== undefined) conditions.ready = ready;
      if (serving !== undefined) conditions.serving = serving;
      if (terminating !== undefined) conditions.terminating = terminating;
      return {
        addresses: [spellings[spelling % spellings.length] ?? "10.0.0.1"],
        conditions,
        ...(zone ? { zone } : {}),
        ...(hints ? { hints: { forZones: hints.map((name) => ({ name })) } } : {}),
      };
    });

/** Endpoints of one slice: each address at most once (the EndpointSlice controller never lists a pod twice). */
const endpointsArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant([]) },
  {
    weight: 6,
    arbitrary: fc
      .uniqueArray(fc.nat({ max: ADDRESS_POOL.length - 1 }), { minLength: 1, maxLength: 6 })
      .chain((indexes) => fc.tuple(...indexes.map(endpointArb))),
  },
);

const slicePortArb = fc.record(
  {
    name: fc.constantFrom("", "", "http", "http", "grpc", null),
    port: fc.constantFrom(8080, 8080, 9090, 9090, 0, null),
    protocol: fc.constantFrom("TCP", "TCP", "UDP", null, null),
  },
  { requiredKeys: [] },
);

const rawSliceArb = fc.record({
  addressType: fc.constantFrom("IPv4", "IPv4", "IPv6", "IPv6", "FQDN"),
  serviceLabel: fc.constantFrom(SERVICE_NAME, SERVICE_NAME, SERVICE_NAME, "other"),
  namespace: fc.constantFrom(NAMESPACE, NAMESPACE, NAMESPACE, "elsewhere"),
  sourceCluster: fc.constantFrom(undefined, undefined, "east"),
  ports: fc.array(slicePortArb, { minLength: 1, maxLength: 3 }),
  endpoints: endpointsArb,
});

type RawSlice = typeof rawSliceArb extends fc.Arbitrary<infer T> ? T : never;

function toSlice(name: string, raw: RawSlice): KubeEndpointSlice {
  const labels: Record<string, string> = { [SERVICE_NAME_LABEL]: raw.serviceLabel };
  if (raw.sourceCluster) labels[SOURCE_CLUSTER_LABEL] = raw.sourceCluster;
  const parsed = parseEndpointSlice({
    metadata: { name, namespace: raw.namespace, labels },
    addressType: raw.addressType,
    ports: raw.ports,
    endpoints: raw.endpoints,
  });
  if (!parsed.ok) throw new Error(`generator built an invalid slice: ${parsed.error}`);
  return parsed.value;
}

/** Slices with unique names, as the API server guarantees within a namespace. */
export const slicesArb: fc.Arbitrary<KubeEndpointSlice[]> = fc
  .oneof(
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 8, arbitrary: fc.array(rawSliceArb, { minLength: 1, maxLength: 6 }) },
  )
  .map((raws) =>
    raws.map((raw, index) => toSlice(`${SERVICE_NAME}-${String.fromCharCode(97 + index)}${index}`, raw)),
  );

export const serviceArb: fc.Arbitrary<KubeService> = fc
  .subarray(
    [
      { name: "", port: 80 },
      { name: "http", port: 8080, protocol: "TCP" },
      { name: "grpc", port: 9090, protocol: "UDP" },
    ],
    { minLength: 1 },
  )
  .map((ports) => {
    const parsed = parseService({
      metadata: {
        name: SERVICE_NAME,
        namespace: NAMESPACE,
        annotations: { "edgeslice.io/hosts": "svc.example" },
      },
      spec: { ports },
    });
    if (!parsed.ok) throw new Error(`generator built an invalid service: ${parsed.error}`);
    return parsed.value;
  });

/** A deterministic shuffle driven by a generated seed, so a failing case replays exactly. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const j = (state >>> 0) % (i + 1);
    const a = out[i];
    const b = out[j];
    if (a === undefined || b === undefined) continue;
    out[i] = b;
    out[j] = a;
  }
  return out;
}

/**
 * The pool entry an address spelling (or a canonical output address) stands for, found without the code under
 * test: IPv6 spellings are compared through the WHATWG URL host parser, IPv4 ones by text. `undefined` for
 * an address no pool entry knows (the translation invented it).
 */
export function poolIndexOf(address: string): number | undefined {
  const key = addressKey(address);
  if (key === undefined) return undefined;
  const index = ADDRESS_POOL.findIndex((spellings) => spellings.some((s) => addressKey(s) === key));
  return index >= 0 ? index : undefined;
}

/** The family a pool entry's address really has, or undefined for entries that are not plain IP literals. */
export function poolFamilyOf(index: number): "ipv4" | "ipv6" | undefined {
  const first = ADDRESS_POOL[index]?.[0];
  if (first === undefined || first.includes("/") || first.includes("%")) return undefined;
  if (first.includes(":")) return addressKey(first) === undefined ? undefined : "ipv6";
  return /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(first)
    ? "ipv4"
    : undefined;
}

function addressKey(address: string): string | undefined {
  if (!address.includes(":")) return address;
  try {
    return new URL(`http://[${address}]/`).hostname;
  } catch {
    return undefined;
  }
}
