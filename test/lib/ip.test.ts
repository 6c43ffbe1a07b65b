import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalIp,
  canonicalIpWithSortKey,
  compareIps,
  ipBytes,
  ipScope,
  ipSortKey,
} from "../../lib/ip.js";

describe("canonicalIp", () => {
  it.each([
    ["a plain IPv4 address", "10.0.0.1", "ipv4", "10.0.0.1"],
    ["IPv4 zeros and maxima", "0.0.0.0", "ipv4", "0.0.0.0"],
    ["IPv4 broadcast", "255.255.255.255", "ipv4", "255.255.255.255"],
    ["IPv6 upper case to lower case", "FD00::ABCD", "ipv6", "fd00::abcd"],
    ["IPv6 uncompressed to compressed", "2001:0db8:0000:0000:0000:0000:0000:0001", "ipv6", "2001:db8::1"],
    ["IPv6 leading zeros removed", "2001:db8:0:0:1:0:0:0001", "ipv6", "2001:db8::1:0:0:1"],
    ["IPv6 longest run compressed", "2001:0:0:1:0:0:0:1", "ipv6", "2001:0:0:1::1"],
    ["IPv6 first run on a tie", "2001:db8:0:0:1:0:0:1", "ipv6", "2001:db8::1:0:0:1"],
    ["IPv6 single zero group kept", "2001:db8:0:1:1:1:1:1", "ipv6", "2001:db8:0:1:1:1:1:1"],
    ["IPv6 single zero group written as ::", "2001:db8::1:1:1:1:1", "ipv6", "2001:db8:0:1:1:1:1:1"],
    ["IPv6 loopback", "0:0:0:0:0:0:0:1", "ipv6", "::1"],
    ["IPv6 unspecified", "::", "ipv6", "::"],
    ["IPv6 trailing zero run", "fe80:0:0:0:0:0:0:0", "ipv6", "fe80::"],
    ["IPv4-mapped in dotted form", "::FFFF:10.0.0.1", "ipv6", "::ffff:10.0.0.1"],
    ["IPv4-mapped written in hex", "0:0:0:0:0:ffff:a00:1", "ipv6", "::ffff:10.0.0.1"],
    ["NAT64 well-known prefix", "64:ff9b::c000:221", "ipv6", "64:ff9b::192.0.2.33"],
    ["deprecated IPv4-compatible printed as hex", "::10.0.0.1", "ipv6", "::a00:1"],
    ["dotted quad after explicit groups", "1:2:3:4:5:6:1.2.3.4", "ipv6", "1:2:3:4:5:6:102:304"],
  ])("canonicalises %s", (_case, input, family, ip) => {
    expect(canonicalIp(input)).toEqual({ family, ip });
  });

  it.each([
    ["an empty string", ""],
    ["an IPv4 part with a leading zero", "10.0.0.01"],
    ["a shortened IPv4 address", "10.1"],
    ["an IPv4 part above 255", "10.0.0.256"],
    ["an IPv4 range", "10.0.0.0/24"],
    ["a signed IPv4 part", "10.0.0.+1"],
    ["IPv4 with spaces", " 10.0.0.1"],
    ["an IPv6 zone id", "fe80::1%eth0"],
    ["two :: in one address", "1::2::3"],
    ["nine IPv6 groups", "1:2:3:4:5:6:7:8:9"],
    ["seven groups without ::", "1:2:3:4:5:6:7"],
    [":: next to eight groups", "1:2:3:4:5:6:7::8"],
    ["a five-digit group", "2001:db8::12345"],
    ["a non-hex group", "2001:db8::g"],
    ["a dangling colon", "2001:db8::1:"],
    ["a leading single colon", ":1::"],
    ["a dotted quad not at the end", "::1.2.3.4:1"],
    ["an invalid embedded quad", "::ffff:1.2.3.04"],
    ["a host name", "pod.example"],
    ["an IPv6 range", "fd00::/64"],
  ])("rejects %s", (_case, input) => {
    expect(canonicalIp(input)).toBeUndefined();
  });
});

describe("compareIps", () => {
  it("orders numerically, not as text", () => {
    const sorted = ["10.0.0.10", "fd00::a", "10.0.0.9", "fd00::9", "9.0.0.1"].sort(compareIps);
    expect(sorted).toEqual(["9.0.0.1", "10.0.0.9", "10.0.0.10", "fd00::9", "fd00::a"]);
  });
});

describe("canonicalIp properties", () => {
  const group = fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff }));
  const groups = fc.array(group, { minLength: 8, maxLength: 8 });
  const spelling = fc.record({ upper: fc.boolean(), pad: fc.boolean() });

  it("prints IPv6 as the WHATWG URL host serializer does (same RFC 5952 §4 rules), however it was written", () => {
    fc.assert(
      fc.property(groups, spelling, (values, { upper, pad }) => {
        const written = values.map((value) => {
          const hex = pad ? value.toString(16).padStart(4, "0") : value.toString(16);
          return upper ? hex.toUpperCase() : hex;
        });
        const text = written.join(":");
        const reference = new URL(`http://[${text}]/`).hostname.slice(1, -1);
        const embedsIpv4 =
          (values.slice(0, 5).every((value) => value === 0) && values[5] === 0xffff) ||
          (values[0] === 0x64 && values[1] === 0xff9b && values.slice(2, 6).every((value) => value === 0));
        fc.pre(!embedsIpv4);
        expect(canonicalIp(text)).toEqual({ family: "ipv6", ip: reference });
        expect(canonicalIp(reference)).toEqual({ family: "ipv6", ip: reference });
        expect(canonicalIpWithSortKey(text)).toEqual({
          family: "ipv6",
          ip: reference,
          sortKey: ipSortKey(text),
        });
      }),
      { numRuns: 2000 },
    );
  });

  it("round-trips every IPv4 address", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }), (bytes) => {
        const text = bytes.join(".");
        expect(canonicalIp(text)).toEqual({ family: "ipv4", ip: text });
      }),
    );
  });
});

describe("ipSortKey", () => {
  it("orders as compareIps does", () => {
    const addresses = [
      "fd00::a",
      "10.0.0.10",
      "::1",
      "9.0.0.1",
      "fd00::9",
      "255.255.255.255",
      "::ffff:1.2.3.4",
    ];
    const byKey = [...addresses].sort((a, b) => ((ipSortKey(a) ?? "") < (ipSortKey(b) ?? "") ? -1 : 1));
    expect(byKey).toEqual([...addresses].sort(compareIps));
  });
});

describe("ipScope", () => {
  it.each([
    ["0.0.0.0", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["169.254.169.254", "link-local"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.255", "multicast"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fe80::1", "link-local"],
    ["febf::1", "link-local"],
    ["ff02::1", "multicast"],
    ["::ffff:0.0.0.0", "unspecified"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:169.254.169.254", "link-local"],
    ["64:ff9b::169.254.169.254", "link-local"],
    ["64:ff9b::127.0.0.1", "loopback"],
    ["2002:a9fe:a9fe::1", "link-local"],
    ["2002:e000:1::", "multicast"],
    ["::a9fe:a9fe", "link-local"],
    ["::7f00:1", "loopback"],
    ["64:ff9b:1::a9fe:a9fe", "link-local"],
  ])("puts %s in the %s range", (text, scope) => {
    const bytes = ipBytes(text);
    expect(bytes && ipScope(bytes)).toBe(scope);
  });

  it.each([
    "10.0.0.1",
    "1.2.3.4",
    "223.255.255.255",
    "240.0.0.1",
    "169.253.0.1",
    "fd00::1",
    "fec0::1",
    "2001:db8::1",
    "::2",
    "::ffff:10.0.0.1",
    "64:ff9b::10.1.2.3",
    "2002:a01:203::1",
    "::a01:203",
  ])("leaves %s ordinary", (text) => {
    const bytes = ipBytes(text);
    expect(bytes && ipScope(bytes)).toBeUndefined();
  });
});
