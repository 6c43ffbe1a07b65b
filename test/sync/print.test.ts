import { describe, expect, it } from "vitest";
import { printLines } from "../../sync/print.js";
import type { KubeEndpointSlice, KubeService } from "../../sync/translate/kube-objects.js";

describe("printLines", () => {
  const service = (
    namespace: string,
    name: string,
    ports: { name?: string; port: number }[],
  ): KubeService => ({
    metadata: { name, namespace },
    spec: { ports },
  });
  const slice: KubeEndpointSlice = {
    metadata: { name: "b-1", namespace: "ns", labels: { "kubernetes.io/service-name": "b" } },
    addressType: "IPv6",
    ports: [{ name: "", port: 8080 }],
    endpoints: [{ addresses: ["FD00::2"] }, { addresses: ["fd00::1"] }],
  };

  it("sorts lines by service then port and keeps the contract's key order", () => {
    const lines = printLines(
      "east",
      [
        service("ns", "b", [{ port: 80 }]),
        service("ns", "a", [
          { name: "y", port: 9000 },
          { name: "x", port: 81 },
        ]),
      ],
      [slice],
    );
    expect(lines.map((line) => Object.keys(JSON.parse(line) as object))).toEqual(
      Array(3).fill(["cluster", "service", "port", "ipv4", "ipv6"]),
    );
    expect(lines.map((line) => JSON.parse(line) as { service: string; port: number })).toMatchObject([
      { service: "ns/a", port: 81 },
      { service: "ns/a", port: 9000 },
      { service: "ns/b", port: 80, ipv6: { endpoints: ["[fd00::1]:8080", "[fd00::2]:8080"] } },
    ]);
  });

  it("prints nothing for no Services", () => {
    expect(printLines("east", [], [slice])).toEqual([]);
  });
});
