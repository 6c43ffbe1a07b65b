import { describe, expect, it } from "vitest";
import {
  addressesOf,
  NO_GATEWAY_ADDRESSES,
  parseGatewayAddresses,
} from "../../../../sync/translate/gateway/addresses.js";
import { gateway, gatewayClass, translate } from "./fixtures.js";

const parsed = (text: string) => {
  const result = parseGatewayAddresses(text);
  if (!result.ok) throw new Error(result.error);
  return result.value;
};

describe("GATEWAY_ADDRESSES", () => {
  it.each([
    [
      "a default list",
      "203.0.113.10, Edge.Example.com",
      "infra/gw",
      "edgeslice",
      ["IPAddress 203.0.113.10", "Hostname edge.example.com"],
    ],
    ["an IPv6 address", "2001:db8::10", "infra/gw", "edgeslice", ["IPAddress 2001:db8::10"]],
    [
      "a class entry over the default",
      "192.0.2.1; edgeslice=198.51.100.7",
      "infra/gw",
      "edgeslice",
      ["IPAddress 198.51.100.7"],
    ],
    [
      "a Gateway entry over its class",
      "edgeslice=198.51.100.7; infra/gw=gw.example.com",
      "infra/gw",
      "edgeslice",
      ["Hostname gw.example.com"],
    ],
    ["another Gateway's entry not at all", "infra/other=192.0.2.9", "infra/gw", "edgeslice", []],
    ["another class's entry not at all", "internal=192.0.2.9", "infra/gw", "edgeslice", []],
  ])("gives %s", (_case, text, key, className, expected) => {
    const addresses = addressesOf(parsed(text), key, className);
    expect(addresses.map((item) => `${item.type} ${item.value}`)).toEqual(expected);
  });

  it.each([
    ["a value that is neither an address nor a name", "edge_example", "is not an IP address or a DNS name"],
    ["an entry without addresses", "edgeslice=", "lists no address"],
    ["a key that is no name", "Not A Class=192.0.2.1", "neither a GatewayClass name"],
  ])("refuses %s", (_case, text, message) => {
    const result = parseGatewayAddresses(text);
    expect(result.ok ? "" : result.error).toContain(message);
  });

  it("reads unset as no address anywhere", () => {
    expect(parseGatewayAddresses(undefined)).toEqual({ ok: true, value: NO_GATEWAY_ADDRESSES });
  });
});

describe("Gateway status.addresses", () => {
  it("writes the configured addresses and Programmed=True", () => {
    const result = translate({ addresses: parsed("edgeslice=192.0.2.1,edge.example.com") });
    const status = result.statuses.gateways.get("infra/gw");
    expect(status?.addresses).toEqual([
      { type: "IPAddress", value: "192.0.2.1" },
      { type: "Hostname", value: "edge.example.com" },
    ]);
    expect(status?.conditions.map((item) => `${item.type}=${item.status}/${item.reason}`)).toEqual([
      "Accepted=True/Accepted",
      "Programmed=True/Programmed",
    ]);
  });

  it("says Programmed=False/AddressNotAssigned when no address is known, and still attaches routes", () => {
    const result = translate({ addresses: NO_GATEWAY_ADDRESSES });
    const status = result.statuses.gateways.get("infra/gw");
    expect(status?.addresses).toEqual([]);
    expect(status?.conditions.find((item) => item.type === "Programmed")).toMatchObject({
      status: "False",
      reason: "AddressNotAssigned",
    });
    expect(status?.listeners[0]?.conditions.find((item) => item.type === "Programmed")?.status).toBe("True");
  });

  it("gives a Gateway that is not accepted no address", () => {
    const result = translate({
      addresses: parsed("192.0.2.1"),
      gatewayClasses: [gatewayClass()],
      gateways: [gateway({ spec: { addresses: [{ type: "example.com/named", value: "edge" }] } })],
    });
    const status = result.statuses.gateways.get("infra/gw");
    expect(status?.addresses).toEqual([]);
    expect(status?.conditions[0]).toMatchObject({ type: "Accepted", reason: "UnsupportedAddress" });
  });

  it.each([
    [
      "one of GATEWAY_ADDRESSES: Programmed with it alone",
      "192.0.2.1",
      "Programmed=True/Programmed",
      ["192.0.2.1"],
    ],
    ["not one of them: AddressNotUsable", "192.0.2.5", "Programmed=False/AddressNotUsable", []],
  ])("takes a static address that is %s", (_name, value, programmed, values) => {
    const result = translate({
      addresses: parsed("192.0.2.1, edge.example.com"),
      gatewayClasses: [gatewayClass()],
      gateways: [gateway({ spec: { addresses: [{ type: "IPAddress", value }] } })],
    });
    const status = result.statuses.gateways.get("infra/gw");
    const conditions = status?.conditions.map((item) => `${item.type}=${item.status}/${item.reason}`);
    expect(conditions).toEqual(["Accepted=True/Accepted", programmed]);
    expect(status?.addresses.map((item) => item.value)).toEqual(values);
  });
});
