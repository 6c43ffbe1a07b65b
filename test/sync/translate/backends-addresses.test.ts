import { describe, expect, it } from "vitest";
import { endpointAddress } from "../../../store/records.js";
import { translateService } from "../../../sync/translate/backends.js";
import type { KubeService } from "../../../sync/translate/kube-objects.js";
import { endpoint, fam, http, none, slice, type TranslationRow, translationCases } from "./fixtures.js";

/** Addresses and families, which slices count, and the order of the result (rules 1, 2 and 4). */
const rows: TranslationRow[] = [
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
];

describe("translateService", () => {
  translationCases(rows);

  it("defaults a missing Service namespace to default on both objects", () => {
    const svc: KubeService = { metadata: { name: "web" }, spec: { ports: http } };
    const own = { ...slice({ name: "a", endpoints: [endpoint("10.0.0.1")] }) };
    own.metadata = { name: "a", labels: { "kubernetes.io/service-name": "web" } };
    const [entry] = translateService(svc, [own, slice({ name: "b", endpoints: [endpoint("10.0.0.2")] })]);
    expect(entry?.ipv4.endpoints.map(endpointAddress)).toEqual(["10.0.0.1:8080"]);
  });
});
