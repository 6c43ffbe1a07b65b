import { describe, expect, it } from "vitest";
import { RouterMetrics } from "../../../functions/core/observability/metrics.js";
import { backendStates, familyStates } from "../../../functions/core/selection/backend-states.js";
import type { ServiceRecord } from "../../../store/records.js";
import { ep, serviceRecord, snapshotOf } from "../fixtures.js";

function withDraining(record: ServiceRecord, family: "ipv4" | "ipv6", draining: string[]): ServiceRecord {
  return { ...record, [family]: { ...record[family], draining: draining.map((ip) => ep(ip)) } };
}

const none = () => false;

describe("familyStates", () => {
  it.each<[string, ServiceRecord, (address: string) => boolean, object]>([
    [
      "counts ready endpoints",
      serviceRecord({ cluster: "a", ipv4: [ep("10.0.0.1"), ep("10.0.0.2")] }),
      none,
      { ready: 2, fallback: 0, draining: 0, ejected: 0 },
    ],
    [
      "counts a family in fallback as fallback, not ready",
      serviceRecord({ cluster: "a", ipv4: [ep("10.0.0.1")], ipv4Fallback: true }),
      none,
      { ready: 0, fallback: 1, draining: 0, ejected: 0 },
    ],
    [
      "counts serving-terminating endpoints next to ready ones as draining",
      withDraining(serviceRecord({ cluster: "a", ipv4: [ep("10.0.0.1")] }), "ipv4", ["10.0.0.9"]),
      none,
      { ready: 1, fallback: 0, draining: 1, ejected: 0 },
    ],
    [
      "moves an ejected endpoint out of ready into ejected",
      serviceRecord({ cluster: "a", ipv4: [ep("10.0.0.1"), ep("10.0.0.2")] }),
      (address) => address === "10.0.0.2:8080",
      { ready: 1, fallback: 0, draining: 0, ejected: 1 },
    ],
    [
      "moves an ejected fallback endpoint out of fallback",
      serviceRecord({ cluster: "a", ipv4: [ep("10.0.0.1")], ipv4Fallback: true }),
      () => true,
      { ready: 0, fallback: 0, draining: 0, ejected: 1 },
    ],
  ])("%s", (_name, record, isEjected, expected) => {
    expect(familyStates(record, "ipv4", isEjected)).toEqual(expected);
  });

  it("looks IPv6 endpoints up by their bracketed address", () => {
    const record = serviceRecord({ cluster: "a", ipv6: [ep("fd00::1")] });
    expect(familyStates(record, "ipv6", (address) => address === "[fd00::1]:8080").ejected).toBe(1);
  });
});

describe("backendStates", () => {
  it("lists each (cluster, service, family) that has endpoints, stale clusters included", () => {
    const snapshot = snapshotOf([
      {
        name: "east",
        records: [serviceRecord({ cluster: "east", service: "demo/web", ipv4: [ep("10.0.0.1")] })],
      },
      {
        name: "west",
        stale: true,
        records: [serviceRecord({ cluster: "west", service: "demo/web", ipv6: [ep("fd00::1")] })],
      },
    ]);
    expect(backendStates(snapshot, none).map((row) => [row.cluster, row.service, row.family])).toEqual([
      ["east", "demo/web", "ipv4"],
      ["west", "demo/web", "ipv6"],
    ]);
  });

  it("keeps a family whose only endpoints are draining", () => {
    const record = withDraining(serviceRecord({ cluster: "a" }), "ipv6", ["fd00::9"]);
    expect(backendStates(snapshotOf([{ name: "a", records: [record] }]), none)).toEqual([
      {
        cluster: "a",
        service: "default/app",
        family: "ipv6",
        counts: { ready: 0, fallback: 0, draining: 1, ejected: 0 },
      },
    ]);
  });

  it("is empty before any snapshot", () => {
    expect(backendStates(undefined, none)).toEqual([]);
  });

  it("renders as edgeslice_backends, every state of every listed family, with edgeslice_cluster_stale", () => {
    const snapshot = snapshotOf([
      {
        name: "east",
        records: [serviceRecord({ cluster: "east", service: "demo/web", ipv4: [ep("10.0.0.1")] })],
      },
    ]);
    const text = new RouterMetrics().render({
      inFlight: 0,
      ejected: 0,
      snapshot: {
        loaded: true,
        version: 1,
        ageSeconds: 0,
        clusters: 1,
        staleClusters: 0,
        storeConnected: true,
      },
      backends: backendStates(snapshot, none),
      clusters: [
        { name: "east", stale: false },
        { name: "west", stale: true },
      ],
    });
    expect(text.match(/^edgeslice_backends\{.*$/gm)).toEqual([
      'edgeslice_backends{service="demo/web",cluster="east",family="ipv4",state="ready"} 1',
      'edgeslice_backends{service="demo/web",cluster="east",family="ipv4",state="fallback"} 0',
      'edgeslice_backends{service="demo/web",cluster="east",family="ipv4",state="draining"} 0',
      'edgeslice_backends{service="demo/web",cluster="east",family="ipv4",state="ejected"} 0',
    ]);
    expect(text).toContain('edgeslice_cluster_stale{cluster="east"} 0');
    expect(text).toContain('edgeslice_cluster_stale{cluster="west"} 1');
  });
});
