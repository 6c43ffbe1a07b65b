import { describe, expect, it } from "vitest";
import { endpointAddress, type FamilyRecord } from "../../../store/records.js";
import { translateService } from "../../../sync/translate/backends.js";
import type { KubeEndpointSlice, KubeService } from "../../../sync/translate/kube-objects.js";

type Conditions = { ready?: boolean | null; serving?: boolean | null; terminating?: boolean | null } | null;
type SlicePort = { name?: string | null; port?: number | null; protocol?: string | null };

function service(
  ports: { name?: string; port: number; protocol?: string }[],
  namespace = "shop",
): KubeService {
  return { kind: "Service", metadata: { name: "web", namespace }, spec: { ports } };
}

function endpoint(
  addresses: string | string[],
  conditions?: Conditions,
  extra: Record<string, unknown> = {},
) {
  return {
    addresses: Array.isArray(addresses) ? addresses : [addresses],
    ...(conditions === undefined ? {} : { conditions }),
    ...extra,
  };
}

function slice(options: {
  name: string;
  addressType?: string;
  ports?: SlicePort[] | null;
  endpoints?: ReturnType<typeof endpoint>[] | null;
  serviceName?: string;
  namespace?: string;
  labels?: Record<string, string>;
}): KubeEndpointSlice {
  return {
    kind: "EndpointSlice",
    metadata: {
      name: options.name,
      namespace: options.namespace ?? "shop",
      labels: { "kubernetes.io/service-name": options.serviceName ?? "web", ...options.labels },
    },
    addressType: options.addressType ?? "IPv4",
    ports: options.ports === undefined ? [{ name: "http", port: 8080, protocol: "TCP" }] : options.ports,
    endpoints: options.endpoints === undefined ? [] : options.endpoints,
  } as KubeEndpointSlice;
}

/** A family as `--print` shows it: addresses only, so each row reads at a glance. */
interface FamilyView {
  endpoints: string[];
  fallback: boolean;
  draining: string[];
}
function view(family: FamilyRecord): FamilyView {
  return {
    endpoints: family.endpoints.map(endpointAddress),
    fallback: family.fallback,
    draining: family.draining.map(endpointAddress),
  };
}
const fam = (endpoints: string[], fallback = false, draining: string[] = []): FamilyView => ({
  endpoints,
  fallback,
  draining,
});
const none = fam([]);

const http = [{ name: "http", port: 80 }];
const NOT_READY = { ready: false, serving: false, terminating: false };
const TERMINATING_SERVING = { ready: false, serving: true, terminating: true };
const TERMINATING_GONE = { ready: false, serving: false, terminating: true };

interface Row {
  case: string;
  ports: { name?: string; port: number; protocol?: string }[];
  slices: KubeEndpointSlice[];
  /** One entry per Service port, in spec order. */
  expected: { ipv4: FamilyView; ipv6: FamilyView }[];
}

const rows: Row[] = [
  {
    case: "keeps a ready endpoint with the slice's port number",
    ports: http,
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1")] })],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "treats nil ready, serving and terminating as true, true, false",
    ports: http,
    slices: [
      slice({
        name: "a",
        endpoints: [
          endpoint("10.0.0.1", null),
          endpoint("10.0.0.2", { ready: null, serving: null, terminating: null }),
        ],
      }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080", "10.0.0.2:8080"]), ipv6: none }],
  },
  {
    case: "treats nil ready on a terminating serving endpoint as ready",
    ports: http,
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1", { serving: true, terminating: true })] })],
    expected: [{ ipv4: fam(["10.0.0.1:8080"], false, ["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "leaves out a not-ready endpoint while others are ready",
    ports: http,
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1"), endpoint("10.0.0.2", NOT_READY)] })],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "lists serving-terminating endpoints as draining next to ready ones",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1"), endpoint("10.0.0.2", TERMINATING_SERVING)] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"], false, ["10.0.0.2:8080"]), ipv6: none }],
  },
  {
    case: "falls back to serving-terminating endpoints when none is ready",
    ports: http,
    slices: [
      slice({
        name: "a",
        endpoints: [
          endpoint("10.0.0.2", TERMINATING_SERVING),
          endpoint("10.0.0.1", TERMINATING_SERVING),
          endpoint("10.0.0.3", TERMINATING_GONE),
        ],
      }),
    ],
    expected: [
      { ipv4: fam(["10.0.0.1:8080", "10.0.0.2:8080"], true, ["10.0.0.1:8080", "10.0.0.2:8080"]), ipv6: none },
    ],
  },
  {
    case: "is empty, not fallback, when every endpoint is terminating and not serving",
    ports: http,
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1", TERMINATING_GONE)] })],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "falls back in one family only on a dual-stack Service",
    ports: http,
    slices: [
      slice({ name: "v4", endpoints: [endpoint("10.0.0.1")] }),
      slice({ name: "v6", addressType: "IPv6", endpoints: [endpoint("fd00::1", TERMINATING_SERVING)] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: fam(["[fd00::1]:8080"], true, ["[fd00::1]:8080"]) }],
  },
  {
    case: "prefers a not-terminating copy of a duplicate over a terminating one",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1", TERMINATING_SERVING)] }),
      slice({ name: "b", endpoints: [endpoint("10.0.0.1", NOT_READY)] }),
    ],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "prefers a ready copy of a duplicate over a not-ready one",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1", NOT_READY)] }),
      slice({ name: "b", endpoints: [endpoint("10.0.0.1")] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "prefers a serving copy of a duplicate when neither is ready",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1", TERMINATING_GONE)] }),
      slice({ name: "b", endpoints: [endpoint("10.0.0.1", TERMINATING_SERVING)] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"], true, ["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "breaks a rank tie on the lexically first slice name",
    ports: http,
    slices: [
      slice({ name: "web-b", endpoints: [endpoint("10.0.0.1", null, { zone: "zone-b" })] }),
      slice({ name: "web-a", endpoints: [endpoint("10.0.0.1", null, { zone: "zone-a" })] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "keeps one copy of an address listed twice in the same slice",
    ports: http,
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1"), endpoint("10.0.0.1")] })],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "keeps the same IP on two different target ports as two backends",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1")] }),
      slice({ name: "b", ports: [{ name: "http", port: 9090 }], endpoints: [endpoint("10.0.0.1")] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080", "10.0.0.1:9090"]), ipv6: none }],
  },
  {
    case: "skips a slice whose port name does not match the Service port",
    ports: http,
    slices: [
      slice({ name: "a", ports: [{ name: "metrics", port: 9100 }], endpoints: [endpoint("10.0.0.1")] }),
      slice({ name: "b", endpoints: [endpoint("10.0.0.2")] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.2:8080"]), ipv6: none }],
  },
  {
    case: "matches an unnamed Service port to an unnamed or empty-named slice port",
    ports: [{ port: 80 }],
    slices: [
      slice({ name: "a", ports: [{ port: 8080 }], endpoints: [endpoint("10.0.0.1")] }),
      slice({ name: "b", ports: [{ name: "", port: 8080 }], endpoints: [endpoint("10.0.0.2")] }),
      slice({ name: "c", ports: [{ name: "http", port: 8080 }], endpoints: [endpoint("10.0.0.3")] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080", "10.0.0.2:8080"]), ipv6: none }],
  },
  {
    case: "translates each of several Service ports in spec order",
    ports: [
      { name: "https", port: 443 },
      { name: "http", port: 80 },
    ],
    slices: [
      slice({
        name: "a",
        ports: [
          { name: "http", port: 8080 },
          { name: "https", port: 8443 },
        ],
        endpoints: [endpoint("10.0.0.1")],
      }),
    ],
    expected: [
      { ipv4: fam(["10.0.0.1:8443"]), ipv6: none },
      { ipv4: fam(["10.0.0.1:8080"]), ipv6: none },
    ],
  },
  {
    case: "adds nothing from a slice port with a null number",
    ports: http,
    slices: [slice({ name: "a", ports: [{ name: "http", port: null }], endpoints: [endpoint("10.0.0.1")] })],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "adds nothing from a slice port with number zero",
    ports: http,
    slices: [slice({ name: "a", ports: [{ name: "http", port: 0 }], endpoints: [endpoint("10.0.0.1")] })],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "adds nothing from a slice without ports",
    ports: http,
    slices: [slice({ name: "a", ports: null, endpoints: [endpoint("10.0.0.1")] })],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "matches the protocol, defaulting to TCP on both sides",
    ports: [
      { name: "dns", port: 53 },
      { name: "dns", port: 53, protocol: "UDP" },
    ],
    slices: [
      slice({
        name: "a",
        ports: [{ name: "dns", port: 5353, protocol: "UDP" }],
        endpoints: [endpoint("10.0.0.1")],
      }),
      slice({ name: "b", ports: [{ name: "dns", port: 5300 }], endpoints: [endpoint("10.0.0.2")] }),
    ],
    expected: [
      { ipv4: fam(["10.0.0.2:5300"]), ipv6: none },
      { ipv4: fam(["10.0.0.1:5353"]), ipv6: none },
    ],
  },
  {
    case: "drops an address that does not parse",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.300"), endpoint("10.0.0.01"), endpoint("10.0.0.2")] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.2:8080"]), ipv6: none }],
  },
  {
    case: "canonicalises upper-case and uncompressed IPv6 and dedups them",
    ports: http,
    slices: [
      slice({
        name: "a",
        addressType: "IPv6",
        endpoints: [endpoint("FD00:0:0:0:0:0:0:00A1"), endpoint("fd00::a1"), endpoint("FD00::B")],
      }),
    ],
    expected: [{ ipv4: none, ipv6: fam(["[fd00::b]:8080", "[fd00::a1]:8080"]) }],
  },
  {
    case: "drops an IPv6 address in an IPv4 slice and the reverse",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("fd00::1"), endpoint("10.0.0.1")] }),
      slice({ name: "b", addressType: "IPv6", endpoints: [endpoint("10.0.0.2"), endpoint("fd00::2")] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: fam(["[fd00::2]:8080"]) }],
  },
  {
    case: "uses only addresses[0]",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint(["10.0.0.1", "10.0.0.9"]), endpoint(["bad", "10.0.0.8"])] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "skips an endpoint without addresses",
    ports: http,
    slices: [slice({ name: "a", endpoints: [endpoint([]), endpoint("10.0.0.1")] })],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "ignores FQDN and unknown address types",
    ports: http,
    slices: [
      slice({ name: "a", addressType: "FQDN", endpoints: [endpoint("pod.example")] }),
      slice({ name: "b", addressType: "IPv5", endpoints: [endpoint("10.0.0.1")] }),
      slice({ name: "c", addressType: "ipv4", endpoints: [endpoint("10.0.0.2")] }),
    ],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "handles slices whose endpoints are null or empty",
    ports: http,
    slices: [slice({ name: "a", endpoints: null }), slice({ name: "b", endpoints: [] })],
    expected: [{ ipv4: none, ipv6: none }],
  },
  {
    case: "ignores slices of other Services and other namespaces",
    ports: http,
    slices: [
      slice({ name: "a", serviceName: "api", endpoints: [endpoint("10.0.0.1")] }),
      slice({ name: "b", namespace: "other", endpoints: [endpoint("10.0.0.2")] }),
      slice({ name: "c", endpoints: [endpoint("10.0.0.3")] }),
    ],
    expected: [{ ipv4: fam(["10.0.0.3:8080"]), ipv6: none }],
  },
  {
    case: "includes slices of any manager",
    ports: http,
    slices: [
      slice({
        name: "a",
        labels: { "endpointslice.kubernetes.io/managed-by": "custom-controller.example" },
        endpoints: [endpoint("10.0.0.1")],
      }),
    ],
    expected: [{ ipv4: fam(["10.0.0.1:8080"]), ipv6: none }],
  },
  {
    case: "sorts endpoints by numeric IP, then port",
    ports: http,
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.10"), endpoint("10.0.0.9"), endpoint("9.1.1.1")] }),
      slice({ name: "b", ports: [{ name: "http", port: 80 }], endpoints: [endpoint("10.0.0.10")] }),
    ],
    expected: [
      { ipv4: fam(["9.1.1.1:8080", "10.0.0.9:8080", "10.0.0.10:80", "10.0.0.10:8080"]), ipv6: none },
    ],
  },
  {
    case: "gives a Service with zero endpoints one empty entry per port",
    ports: [
      { name: "http", port: 80 },
      { name: "https", port: 443 },
    ],
    slices: [],
    expected: [
      { ipv4: none, ipv6: none },
      { ipv4: none, ipv6: none },
    ],
  },
  {
    case: "gives a Service without ports no entries",
    ports: [],
    slices: [slice({ name: "a", endpoints: [endpoint("10.0.0.1")] })],
    expected: [],
  },
];

describe("translateService", () => {
  it.each(rows)("$case", (row) => {
    const result = translateService(service(row.ports), row.slices);
    expect(result.map((entry) => ({ ipv4: view(entry.ipv4), ipv6: view(entry.ipv6) }))).toEqual(row.expected);
  });

  it.each(rows)("gives the same result whatever the slice order: $case", (row) => {
    const forward = translateService(service(row.ports), row.slices);
    const reversed = translateService(service(row.ports), [...row.slices].reverse());
    expect(reversed).toEqual(forward);
  });

  it("reports the Service port with protocol defaulted to TCP", () => {
    const result = translateService(service([{ port: 80 }, { name: "dns", port: 53, protocol: "UDP" }]), []);
    expect(result.map((entry) => entry.port)).toEqual([
      { name: "", number: 80, protocol: "TCP" },
      { name: "dns", number: 53, protocol: "UDP" },
    ]);
  });

  it("keeps zone and topology hints on each endpoint", () => {
    const slices = [
      slice({
        name: "a",
        endpoints: [
          endpoint("10.0.0.1", null, {
            zone: "zone-a",
            hints: { forZones: [{ name: "zone-a" }, { name: "zone-c" }] },
          }),
          endpoint("10.0.0.2", null, { zone: "zone-b", hints: null }),
          endpoint("10.0.0.3", null, {}),
        ],
      }),
    ];
    const [entry] = translateService(service(http), slices);
    expect(entry?.ipv4.endpoints).toEqual([
      { ip: "10.0.0.1", port: 8080, zone: "zone-a", forZones: ["zone-a", "zone-c"] },
      { ip: "10.0.0.2", port: 8080, zone: "zone-b" },
      { ip: "10.0.0.3", port: 8080 },
    ]);
  });

  it("records the MCS source cluster of an imported slice", () => {
    const slices = [
      slice({
        name: "imported",
        labels: { "multicluster.kubernetes.io/source-cluster": "west" },
        endpoints: [endpoint("10.1.0.1")],
      }),
      slice({ name: "local", endpoints: [endpoint("10.0.0.1")] }),
    ];
    const [entry] = translateService(service(http), slices);
    expect(entry?.ipv4.endpoints).toEqual([
      { ip: "10.0.0.1", port: 8080 },
      { ip: "10.1.0.1", port: 8080, sourceCluster: "west" },
    ]);
  });

  it("keeps the zone of the lexically first slice's copy on a rank tie", () => {
    const slices = [
      slice({ name: "web-b", endpoints: [endpoint("10.0.0.1", null, { zone: "zone-b" })] }),
      slice({ name: "web-a", endpoints: [endpoint("10.0.0.1", null, { zone: "zone-a" })] }),
    ];
    for (const order of [slices, [...slices].reverse()]) {
      const [entry] = translateService(service(http), order);
      expect(entry?.ipv4.endpoints).toEqual([{ ip: "10.0.0.1", port: 8080, zone: "zone-a" }]);
    }
  });

  it("keeps the ready copy's zone when duplicates differ in conditions, in both orders", () => {
    const slices = [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1", NOT_READY, { zone: "zone-a" })] }),
      slice({ name: "b", endpoints: [endpoint("10.0.0.1", null, { zone: "zone-b" })] }),
    ];
    for (const order of [slices, [...slices].reverse()]) {
      const [entry] = translateService(service(http), order);
      expect(entry?.ipv4.endpoints).toEqual([{ ip: "10.0.0.1", port: 8080, zone: "zone-b" }]);
    }
  });

  it("picks the same copy of an address listed twice in one slice whatever their order", () => {
    const copies = [
      endpoint("10.0.0.1", null, { zone: "zone-b" }),
      endpoint("10.0.0.1", null, { zone: "zone-a" }),
    ];
    const forward = translateService(service(http), [slice({ name: "a", endpoints: copies })]);
    const reversed = translateService(service(http), [
      slice({ name: "a", endpoints: [...copies].reverse() }),
    ]);
    expect(reversed).toEqual(forward);
    expect(forward[0]?.ipv4.endpoints).toHaveLength(1);
  });

  it("defaults a missing Service namespace to default on both objects", () => {
    const svc: KubeService = { metadata: { name: "web" }, spec: { ports: http } };
    const own = { ...slice({ name: "a", endpoints: [endpoint("10.0.0.1")] }) };
    own.metadata = { name: "a", labels: { "kubernetes.io/service-name": "web" } };
    const [entry] = translateService(svc, [own, slice({ name: "b", endpoints: [endpoint("10.0.0.2")] })]);
    expect(entry?.ipv4.endpoints.map(endpointAddress)).toEqual(["10.0.0.1:8080"]);
  });
});
