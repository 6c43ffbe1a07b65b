import { describe, expect, it } from "vitest";
import {
  decodeServiceRecord,
  type EndpointRecord,
  endpointIpProblem,
  MAX_ENDPOINTS_PER_FAMILY,
  MAX_HOSTS,
  MAX_RECORD_BYTES,
  SCHEMA_VERSION,
  type ServiceRecord,
  serializeServiceRecord,
} from "../../store/records.js";

function recordWith(ipv4: unknown[], ipv6: unknown[] = []): string {
  return JSON.stringify({
    v: SCHEMA_VERSION,
    cluster: "east",
    service: "shop/web",
    hosts: ["shop.test"],
    pathPrefix: "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints: ipv4, fallback: false, draining: [] },
    ipv6: { endpoints: ipv6, fallback: false, draining: [] },
  });
}

function errorOf(raw: string): string | undefined {
  const decoded = decodeServiceRecord(raw);
  return decoded.ok ? undefined : decoded.error;
}

describe("endpoint addresses a record may hold", () => {
  it.each([
    ["a host name", "localhost", /not an IP address literal/],
    ["an integer IPv4 spelling", "2130706433", /not an IP address literal/],
    ["a hex short IPv4 spelling", "0x7f.1", /not an IP address literal/],
    ["userinfo before the address", "u@127.0.0.1", /not an IP address literal/],
    ["a path after the address", "127.0.0.1/x?", /not an IP address literal/],
    ["the IPv4 unspecified address", "0.0.0.0", /is unspecified/],
    ["the IPv4 broadcast address", "255.255.255.255", /is broadcast/],
    ["an IPv4 multicast address", "224.0.0.1", /is multicast/],
    ["an IPv4 link-local address (cloud metadata)", "169.254.169.254", /is link-local/],
    ["an IPv4 address with a leading zero", "127.0.0.01", /not an IP address literal/],
    ["an IPv6 address in the IPv4 family", "::1", /not an ipv4 address/],
  ])("refuses %s in the IPv4 family", (_what, ip, reason) => {
    expect(errorOf(recordWith([{ ip, port: 80 }]))).toMatch(reason);
  });

  it.each([
    ["the IPv6 unspecified address", "::", /is unspecified/],
    ["an IPv6 multicast address", "ff02::1", /is multicast/],
    ["an IPv6 link-local address", "fe80::1", /is link-local/],
    ["a zone id", "fe80::1%eth0", /not an IP address literal/],
    ["a zone id on loopback", "::1%lo", /not an IP address literal/],
    ["upper-case hex", "FD00::1", /not in canonical form/],
    ["an uncompressed spelling", "0:0:0:0:0:0:0:1", /not in canonical form/],
    ["brackets", "[::1]", /not an IP address literal/],
    ["an IPv4-mapped unspecified address", "::ffff:0.0.0.0", /is unspecified/],
    [
      "cloud metadata through NAT64",
      "64:ff9b::169.254.169.254",
      /is link-local \(it embeds 169\.254\.169\.254, nat64\)/,
    ],
    ["cloud metadata through a local-use NAT64 prefix", "64:ff9b:1::a9fe:a9fe", /is link-local/],
    [
      "cloud metadata through 6to4",
      "2002:a9fe:a9fe::1",
      /is link-local \(it embeds 169\.254\.169\.254, 6to4\)/,
    ],
    [
      "cloud metadata as IPv4-compatible",
      "::a9fe:a9fe",
      /is link-local \(it embeds 169\.254\.169\.254, compatible\)/,
    ],
    [
      "a translator's loopback through NAT64",
      "64:ff9b::127.0.0.1",
      /is loopback \(it embeds 127\.0\.0\.1, nat64\)/,
    ],
    ["a broadcast address through 6to4", "2002:ffff:ffff::", /is broadcast/],
    ["an IPv4 address in the IPv6 family", "127.0.0.1", /not an ipv6 address/],
  ])("refuses %s in the IPv6 family", (_what, ip, reason) => {
    expect(errorOf(recordWith([], [{ ip, port: 80 }]))).toMatch(reason);
  });

  it("keeps loopback in both families, and canonical addresses", () => {
    expect(errorOf(recordWith([{ ip: "127.0.0.1", port: 80 }], [{ ip: "::1", port: 80 }]))).toBeUndefined();
    expect(endpointIpProblem("::ffff:127.0.0.1", "ipv6")).toBeUndefined();
    expect(endpointIpProblem("10.1.2.3", "ipv4")).toBeUndefined();
  });

  it("refuses a family listing more than the bound, before looking at each endpoint", () => {
    const many = Array.from({ length: MAX_ENDPOINTS_PER_FAMILY + 1 }, (_, i) => ({
      ip: "127.0.0.1",
      port: 1 + (i % 65535),
    }));
    expect(errorOf(recordWith(many))).toMatch(/^ipv4\.endpoints:/);
    expect(errorOf(recordWith(many.slice(1)))).toBeUndefined();
  });

  it("refuses a serialised record longer than the bound without parsing it", () => {
    expect(errorOf(`${recordWith([])}${" ".repeat(MAX_RECORD_BYTES)}`)).toMatch(/longer than/);
  });

  it("refuses a record whose host is not a DNS name", () => {
    const record = JSON.parse(recordWith([])) as ServiceRecord;
    for (const host of ['a"b.test', "Shop.test", "shop.test:80", "*", "a..b"]) {
      expect(errorOf(JSON.stringify({ ...record, hosts: [host] }))).toMatch(/^hosts\.0/);
    }
    expect(errorOf(JSON.stringify({ ...record, hosts: ["*.shop.test"] }))).toBeUndefined();
  });

  it("refuses a record listing more host names than the bound", () => {
    const record = JSON.parse(recordWith([])) as ServiceRecord;
    const hosts = Array.from({ length: MAX_HOSTS + 1 }, (_, i) => `h${i}.test`);
    expect(errorOf(JSON.stringify({ ...record, hosts }))).toMatch(/^hosts:/);
    expect(errorOf(JSON.stringify({ ...record, hosts: hosts.slice(1) }))).toBeUndefined();
  });

  it("round-trips the largest record it accepts", () => {
    const endpoints: EndpointRecord[] = Array.from({ length: MAX_ENDPOINTS_PER_FAMILY }, (_, i) => ({
      ip: `127.${(i >> 8) & 255}.${i & 255}.1`,
      port: 8080,
      zone: "zone-a",
      forZones: ["zone-a"],
    }));
    const record = JSON.parse(recordWith([])) as ServiceRecord;
    const full = { ...record, ipv4: { endpoints, fallback: false, draining: endpoints } };
    const raw = serializeServiceRecord(full);
    expect(raw.length).toBeLessThan(MAX_RECORD_BYTES);
    expect(decodeServiceRecord(raw)).toEqual({ ok: true, value: full });
  });
});
