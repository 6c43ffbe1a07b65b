import { describe, expect, it } from "vitest";
import type { GatewayAddress } from "../../../../sync/translate/gateway/addresses.js";
import { assignAddresses, gatewaySpecProblem } from "../../../../sync/translate/gateway/gateway-spec.js";
import { gateway } from "./fixtures.js";

const IP: GatewayAddress = { type: "IPAddress", value: "192.0.2.10" };
const NAME: GatewayAddress = { type: "Hostname", value: "edge.example.com" };

describe("gatewaySpecProblem", () => {
  it.each([
    ["a plain Gateway", {}, undefined, undefined],
    ["a class not accepted", {}, "class problem", "Invalid"],
    [
      "a parametersRef, which edgeslice never reads",
      { infrastructure: { parametersRef: { group: "", kind: "ConfigMap", name: "missing" } } },
      undefined,
      "InvalidParameters",
    ],
    ["infrastructure labels alone", { infrastructure: { labels: { team: "a" } } }, undefined, undefined],
    ["a static IPAddress", { addresses: [{ type: "IPAddress", value: "192.0.2.5" }] }, undefined, undefined],
    ["an address without type or value", { addresses: [{}] }, undefined, undefined],
    ["a Hostname", { addresses: [{ type: "Hostname" }] }, undefined, undefined],
    [
      "an address type edgeslice does not know",
      { addresses: [{ type: "test/fake-invalid-type", value: "x" }] },
      undefined,
      "UnsupportedAddress",
    ],
  ] as const)("%s", (_name, spec, classProblem, reason) => {
    expect(gatewaySpecProblem(gateway({ spec }), classProblem)?.reason).toBe(reason);
  });

  it("says which parameters it was given", () => {
    const spec = { infrastructure: { parametersRef: { group: "", kind: "ConfigMap", name: "tuning" } } };
    expect(gatewaySpecProblem(gateway({ spec }), undefined)?.message).toContain("ConfigMap tuning");
  });
});

describe("assignAddresses", () => {
  it.each([
    ["no request: every known address", undefined, ["192.0.2.10", "edge.example.com"], false],
    ["an IPAddress without a value: the known IPs", [{ type: "IPAddress" }], ["192.0.2.10"], false],
    ["an address without a type: IPAddress", [{}], ["192.0.2.10"], false],
    ["a Hostname without a value: the known names", [{ type: "Hostname" }], ["edge.example.com"], false],
    ["a static address that is known", [{ type: "IPAddress", value: "192.0.2.10" }], ["192.0.2.10"], false],
    [
      "a known name in another case",
      [{ type: "Hostname", value: "Edge.Example.com" }],
      ["edge.example.com"],
      false,
    ],
    ["a static address that is not known", [{ type: "IPAddress", value: "192.0.2.99" }], [], true],
    [
      "a known and an unknown static address",
      [
        { type: "IPAddress", value: "192.0.2.99" },
        { type: "IPAddress", value: "192.0.2.10" },
      ],
      ["192.0.2.10"],
      true,
    ],
    ["a type without a known address", [{ type: "Hostname" }], [], false],
  ])("%s", (_name, addresses, values, unusable) => {
    const spec = addresses ? { addresses } : {};
    const known = _name === "a type without a known address" ? [IP] : [IP, NAME];
    const assignment = assignAddresses(gateway({ spec }), known);
    expect(assignment.addresses.map((item) => item.value)).toEqual(values);
    expect(assignment.unusable !== undefined).toBe(unusable);
  });
});
