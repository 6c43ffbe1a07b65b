import { describe, expect, it } from "vitest";
import type { BackendSeries } from "../../../functions/core/observability/backend-metrics.js";
import { RouterMetrics } from "../../../functions/core/observability/metrics.js";
import { type EjectedCheck, eachServiceBackends } from "../../../functions/core/selection/backend-states.js";
import { ep, serviceRecord, snapshotOf } from "../fixtures.js";

/** Two clusters: east has two Services (one dual-stack), west one. */
const snapshot = snapshotOf([
  {
    name: "east",
    records: [
      serviceRecord({
        cluster: "east",
        service: "shop/web",
        ipv4: [ep("127.0.0.1"), ep("127.0.0.2")],
        ipv6: [ep("::1")],
      }),
      serviceRecord({ cluster: "east", service: "shop/api", ipv4: [ep("127.0.0.3")] }),
    ],
  },
  {
    name: "west",
    records: [serviceRecord({ cluster: "west", service: "shop/web", ipv4: [ep("127.0.1.1")] })],
  },
]);

function backendLines(series: BackendSeries, isEjected: EjectedCheck = undefined): string[] {
  const text = new RouterMetrics().render({
    inFlight: 0,
    ejected: 0,
    snapshot: {
      loaded: true,
      version: 1,
      ageSeconds: 0,
      clusters: 2,
      staleClusters: 0,
      storeConnected: true,
    },
    backends: eachServiceBackends(snapshot, isEjected),
    backendSeries: series,
  });
  return text.match(/^edgeslice_backends.*$/gm) ?? [];
}

describe("edgeslice_backends by METRICS_BACKENDS", () => {
  it("service: a series per state of every (Service, cluster, family)", () => {
    const lines = backendLines("service");
    expect(lines).toHaveLength(4 * 4);
    expect(lines.slice(0, 4)).toEqual([
      'edgeslice_backends{service="shop/web",cluster="east",family="ipv4",state="ready"} 2',
      'edgeslice_backends{service="shop/web",cluster="east",family="ipv4",state="fallback"} 0',
      'edgeslice_backends{service="shop/web",cluster="east",family="ipv4",state="draining"} 0',
      'edgeslice_backends{service="shop/web",cluster="east",family="ipv4",state="ejected"} 0',
    ]);
  });

  it("cluster: a series per state of every (cluster, family), summed over the cluster's Services", () => {
    expect(backendLines("cluster")).toEqual([
      'edgeslice_backends{cluster="east",family="ipv4",state="ready"} 3',
      'edgeslice_backends{cluster="east",family="ipv4",state="fallback"} 0',
      'edgeslice_backends{cluster="east",family="ipv4",state="draining"} 0',
      'edgeslice_backends{cluster="east",family="ipv4",state="ejected"} 0',
      'edgeslice_backends{cluster="east",family="ipv6",state="ready"} 1',
      'edgeslice_backends{cluster="east",family="ipv6",state="fallback"} 0',
      'edgeslice_backends{cluster="east",family="ipv6",state="draining"} 0',
      'edgeslice_backends{cluster="east",family="ipv6",state="ejected"} 0',
      'edgeslice_backends{cluster="west",family="ipv4",state="ready"} 1',
      'edgeslice_backends{cluster="west",family="ipv4",state="fallback"} 0',
      'edgeslice_backends{cluster="west",family="ipv4",state="draining"} 0',
      'edgeslice_backends{cluster="west",family="ipv4",state="ejected"} 0',
    ]);
  });

  it("cluster: an ejected endpoint moves from ready to ejected in its cluster's sums", () => {
    const lines = backendLines("cluster", (address) => address === "127.0.0.3:8080");
    expect(lines).toContain('edgeslice_backends{cluster="east",family="ipv4",state="ready"} 2');
    expect(lines).toContain('edgeslice_backends{cluster="east",family="ipv4",state="ejected"} 1');
  });

  it("none: no edgeslice_backends family at all", () => {
    expect(backendLines("none")).toEqual([]);
  });
});
