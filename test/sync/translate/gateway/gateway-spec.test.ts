import { describe, expect, it } from "vitest";
import type { GatewayAddress } from "../../../../sync/translate/gateway/addresses.js";
import { gatewaySpecProblem, reportedAddresses } from "../../../../sync/translate/gateway/gateway-spec.js";
import { gateway } from "./fixtures.js";

const IP: GatewayAddress = { type: "IPAddress", value: "192.0.2.10" };
const NAME: GatewayAddress = { type: "Hostname", value: "edge.example.com" };

describe("gatewaySpecProblem", () => {
  it.each([
    ["a plain Gateway", {}, undefined, [IP], undefined],
    ["a class not accepted", {}, "class problem", [IP], "Invalid"],
    [
      "a parametersRef, which edgeslice never reads",
      { infrastructure: { parametersRef: { group: "", kind: "ConfigMap", name: "missing" } } },
      undefined,
      [IP],
      "InvalidParameters",
    ],
    [
      "infrastructure labels alone",
      { infrastructure: { labels: { team: "a" } } },
      undefined,
      [IP],
      undefined,
    ],
    [
      "a static address",
      { addresses: [{ type: "IPAddress", value: "192.0.2.5" }] },
      undefined,
      [IP],
      "UnsupportedAddress",
    ],
    [
      "an IPAddress without a value, one known",
      { addresses: [{ type: "IPAddress" }] },
      undefined,
      [IP],
      undefined,
    ],
    ["an address without type or value (IPAddress)", { addresses: [{}] }, undefined, [IP, NAME], undefined],
    [
      "an IPAddress without a value, none known",
      { addresses: [{ type: "IPAddress" }] },
      undefined,
      [NAME],
      "UnsupportedAddress",
    ],
    [
      "a Hostname without a value, one known",
      { addresses: [{ type: "Hostname" }] },
      undefined,
      [IP, NAME],
      undefined,
    ],
    [
      "a NamedAddress type",
      { addresses: [{ type: "example.com/named" }] },
      undefined,
      [IP],
      "UnsupportedAddress",
    ],
  ] as const)("%s: %s", (_name, spec, classProblem, configured, reason) => {
    const problem = gatewaySpecProblem(gateway({ spec }), classProblem, configured);
    expect(problem?.reason).toBe(reason);
  });

  it("says which parameters it was given", () => {
    const problem = gatewaySpecProblem(
      gateway({
        spec: { infrastructure: { parametersRef: { group: "", kind: "ConfigMap", name: "tuning" } } },
      }),
      undefined,
      [IP],
    );
    expect(problem?.message).toContain("ConfigMap tuning");
  });
});

describe("reportedAddresses", () => {
  it.each([
    ["no request: every known address", undefined, ["192.0.2.10", "edge.example.com"]],
    ["an IPAddress request: the IP addresses", [{ type: "IPAddress" }], ["192.0.2.10"]],
    ["a Hostname request: the names", [{ type: "Hostname" }], ["edge.example.com"]],
  ])("%s", (_name, addresses, values) => {
    const spec = addresses ? { addresses } : {};
    expect(reportedAddresses(gateway({ spec }), [IP, NAME]).map((item) => item.value)).toEqual(values);
  });
});
