import { describe, expect, it } from "vitest";
import type { EndpointRecord } from "../../../store/records.js";
import { translateService } from "../../../sync/translate/backends.js";
import type { KubeEndpointSlice } from "../../../sync/translate/kube-objects.js";
import { byCase, endpoint, http, NOT_READY, service, slice } from "./fixtures.js";

/** What travels with each endpoint (rule 7), and from which copy of a duplicate (rule 5). */
const rows: { case: string; slices: KubeEndpointSlice[]; expected: EndpointRecord[] }[] = [
  {
    case: "keeps zone and topology hints on each endpoint",
    slices: [
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
    ],
    expected: [
      { ip: "10.0.0.1", port: 8080, zone: "zone-a", forZones: ["zone-a", "zone-c"] },
      { ip: "10.0.0.2", port: 8080, zone: "zone-b" },
      { ip: "10.0.0.3", port: 8080 },
    ],
  },
  {
    case: "records the MCS source cluster of an imported slice",
    slices: [
      slice({
        name: "imported",
        labels: { "multicluster.kubernetes.io/source-cluster": "west" },
        endpoints: [endpoint("10.1.0.1")],
      }),
      slice({ name: "local", endpoints: [endpoint("10.0.0.1")] }),
    ],
    expected: [
      { ip: "10.0.0.1", port: 8080 },
      { ip: "10.1.0.1", port: 8080, sourceCluster: "west" },
    ],
  },
  {
    case: "keeps the zone of the lexically first slice's copy on a rank tie",
    slices: [
      slice({ name: "web-b", endpoints: [endpoint("10.0.0.1", null, { zone: "zone-b" })] }),
      slice({ name: "web-a", endpoints: [endpoint("10.0.0.1", null, { zone: "zone-a" })] }),
    ],
    expected: [{ ip: "10.0.0.1", port: 8080, zone: "zone-a" }],
  },
  {
    case: "keeps the ready copy's zone when duplicates differ in conditions, in both orders",
    slices: [
      slice({ name: "a", endpoints: [endpoint("10.0.0.1", NOT_READY, { zone: "zone-a" })] }),
      slice({ name: "b", endpoints: [endpoint("10.0.0.1", null, { zone: "zone-b" })] }),
    ],
    expected: [{ ip: "10.0.0.1", port: 8080, zone: "zone-b" }],
  },
];

describe("translateService", () => {
  it.each(byCase(rows))("%s", (_case, row) => {
    for (const order of [row.slices, [...row.slices].reverse()]) {
      const [entry] = translateService(service({ ports: http }), order);
      expect(entry?.ipv4.endpoints).toEqual(row.expected);
    }
  });
});
