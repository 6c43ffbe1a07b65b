import { describe, expect, it } from "vitest";
import {
  clientOfForwardedFor,
  forwardedAddress,
  forwardedProto,
  NO_TRUSTED_PROXIES,
  parseTrustedProxies,
  type TrustedProxies,
} from "../../../functions/core/http/trusted-proxies.js";

function trusted(text: string): TrustedProxies {
  const parsed = parseTrustedProxies(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

describe("parseTrustedProxies", () => {
  it.each([
    ["one network", "10.0.0.0/8", ["10.0.0.0/8"]],
    ["networks of both families, spaced", " 10.0.0.0/8 ,2001:DB8::/32", ["10.0.0.0/8", "2001:db8::/32"]],
    ["a bare address as one host", "192.0.2.10, ::1", ["192.0.2.10/32", "::1/128"]],
  ])("reads %s", (_what, text, networks) => {
    expect(trusted(text).networks).toEqual(networks);
  });

  it.each([
    ["an empty entry", "10.0.0.0/8,,192.0.2.1", /empty entry/],
    ["a trailing comma", "10.0.0.0/8,", /empty entry/],
    ["a name", "lb.internal", /"lb.internal" is neither an address nor a CIDR/],
    ["bits past the prefix", "10.1.2.3/8", /did you mean 10\.0\.0\.0\/8/],
    ["a prefix too long", "10.0.0.0/33", /0-32/],
  ])("refuses %s", (_what, text, message) => {
    const parsed = parseTrustedProxies(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(message);
  });
});

describe("TrustedProxies.trusts", () => {
  const proxies = trusted("10.0.0.0/8, 2001:db8::/32");

  it.each([
    ["an address in a network", "10.4.5.6", true],
    ["the same address as a dual-stack socket reports it", "::ffff:10.4.5.6", true],
    ["an IPv6 address in a network", "2001:db8::9", true],
    ["an address outside", "192.0.2.1", false],
    ["something that is no address", "unknown", false],
    ["no address", undefined, false],
  ])("%s: %s", (_what, ip, expected) => {
    expect(proxies.trusts(ip)).toBe(expected);
    expect(proxies.trusts(ip)).toBe(expected);
  });

  it("trusts nobody when unset", () => {
    expect(NO_TRUSTED_PROXIES.trusts("10.0.0.1")).toBe(false);
  });
});

describe("clientOfForwardedFor (the client of a request, for the access log and the headers' trust)", () => {
  const proxies = trusted("10.0.0.0/8");

  it.each([
    ["an untrusted peer's list is ignored", "192.0.2.1", "203.0.113.9", "192.0.2.1"],
    ["a trusted peer without a list", "10.0.0.1", undefined, "10.0.0.1"],
    ["a trusted peer's last element", "10.0.0.1", "203.0.113.9", "203.0.113.9"],
    ["trusted hops skipped from the right", "10.0.0.1", "198.51.100.1, 203.0.113.9, 10.1.1.1", "203.0.113.9"],
    ["an element with a port", "10.0.0.1", "203.0.113.9:41000", "203.0.113.9"],
    ["a bracketed IPv6 element with a port", "10.0.0.1", "[2001:db8::5]:41000", "2001:db8::5"],
    [
      "garbage stops the walk at the last trusted hop",
      "10.0.0.1",
      "203.0.113.9, unknown, 10.1.1.1",
      "10.1.1.1",
    ],
    ["garbage right at the end: the peer", "10.0.0.1", "203.0.113.9, evil", "10.0.0.1"],
    ["every hop trusted: the leftmost", "10.0.0.1", "10.2.2.2, 10.1.1.1", "10.2.2.2"],
    ["empty elements skipped", "10.0.0.1", "203.0.113.9, , ", "203.0.113.9"],
  ])("%s", (_what, peer, list, client) => {
    expect(clientOfForwardedFor(peer, list, proxies)).toBe(client);
  });
});

describe("forwardedAddress", () => {
  it.each([
    ["192.0.2.1", "192.0.2.1"],
    ["192.0.2.1:80", "192.0.2.1"],
    ["2001:db8::1", "2001:db8::1"],
    ["[2001:db8::1]", "2001:db8::1"],
    ["[2001:db8::1]:443", "2001:db8::1"],
    ["[2001:db8::1", undefined],
    ["unknown", undefined],
    ["_hidden", undefined],
  ])("%s is %s", (element, address) => {
    expect(forwardedAddress(element)).toBe(address);
  });
});

describe("forwardedProto", () => {
  it.each([
    [undefined, "http", "http"],
    ["https", "http", "https"],
    ["HTTPS", "http", "https"],
    ["https, http", "http", "https"],
    ["gopher", "https", "https"],
    ["", "http", "http"],
  ] as const)("%j over a %s connection is %s", (value, connection, expected) => {
    expect(forwardedProto(value, connection)).toBe(expected);
  });
});
