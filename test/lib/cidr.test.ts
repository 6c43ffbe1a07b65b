import { describe, expect, it } from "vitest";
import { networkContains, parseNetwork } from "../../lib/cidr.js";
import { ipBytes } from "../../lib/ip.js";

describe("parseNetwork", () => {
  it.each([
    ["an IPv4 network", "10.1.0.0/16", "10.1.0.0/16"],
    ["a single IPv4 address", "127.0.0.1/32", "127.0.0.1/32"],
    ["every IPv4 address", "0.0.0.0/0", "0.0.0.0/0"],
    ["an IPv6 network, printed canonically", "FD00:1:0::/64", "fd00:1::/64"],
    ["every IPv6 address", "::/0", "::/0"],
    ["a prefix that ends inside a byte", "10.1.128.0/17", "10.1.128.0/17"],
  ])("reads %s", (_what, text, canonical) => {
    const parsed = parseNetwork(text);
    expect(parsed.ok && parsed.value.text).toBe(canonical);
  });

  it.each([
    ["a bare address", "10.1.0.0", /not address\/prefix-length/],
    ["a name", "pods.local/16", /not an IP address/],
    ["an IPv4 prefix over 32", "10.0.0.0/33", /0-32/],
    ["an IPv6 prefix over 128", "fd00::/129", /0-128/],
    ["a prefix with a sign", "10.0.0.0/+8", /0-32/],
    ["a prefix with a leading zero", "10.0.0.0/08", /0-32/],
    ["an empty prefix", "10.0.0.0/", /0-32/],
    ["bits past the prefix (says what was meant)", "10.1.2.3/16", /did you mean 10\.1\.0\.0\/16/],
    ["IPv6 bits past the prefix", "fd00:1::5/64", /did you mean fd00:1::\/64/],
  ])("refuses %s", (_what, text, message) => {
    const parsed = parseNetwork(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(message);
  });
});

describe("networkContains", () => {
  const contains = (network: string, address: string) => {
    const parsed = parseNetwork(network);
    const bytes = ipBytes(address);
    if (!parsed.ok || !bytes) throw new Error(`bad case ${network} ${address}`);
    return networkContains(parsed.value, bytes);
  };

  it.each([
    ["10.1.0.0/16", "10.1.255.7", true],
    ["10.1.0.0/16", "10.2.0.1", false],
    ["10.1.128.0/17", "10.1.200.1", true],
    ["10.1.128.0/17", "10.1.127.255", false],
    ["127.0.0.1/32", "127.0.0.1", true],
    ["127.0.0.1/32", "127.0.0.2", false],
    ["0.0.0.0/0", "192.0.2.1", true],
    ["fd00:1::/64", "fd00:1::abcd", true],
    ["fd00:1::/64", "fd00:2::1", false],
    ["::/0", "2001:db8::1", true],
    ["0.0.0.0/0", "::1", false],
    ["::/0", "10.0.0.1", false],
  ])("%s holds %s: %s", (network, address, expected) => {
    expect(contains(network, address)).toBe(expected);
  });

  it("judges an IPv4-mapped IPv6 address by the IPv4 address a connection to it reaches", () => {
    expect(contains("10.1.0.0/16", "::ffff:10.1.0.9")).toBe(true);
    expect(contains("::/0", "::ffff:10.1.0.9")).toBe(false);
  });
});
