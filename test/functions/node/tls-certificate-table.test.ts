import { describe, expect, it } from "vitest";
import {
  certificateTable,
  isMisdirected,
  selectCertificate,
  type TableCertificate,
} from "../../../functions/node/tls/certificate-table.js";

const cert = (id: string, hostnames: string[], extra: Partial<TableCertificate> = {}): TableCertificate => ({
  cluster: "east",
  id,
  version: "v1",
  hostnames,
  ...extra,
});

const table = certificateTable([
  cert("shop/exact", ["shop.example.com"]),
  cert("shop/wildcard", ["*.example.com", "example.com"]),
  cert("shop/deep", ["*.b.example.com"]),
  cert("zz/exact-too", ["shop.example.com"]),
  cert("a/west-first", ["west.test"], { cluster: "west" }),
  cert("a/east-second", ["west.test"], { cluster: "east" }),
]);

describe("choosing a certificate by SNI", () => {
  it.each([
    ["shop.example.com", "shop/exact", "an exact name beats the wildcard covering it"],
    ["SHOP.Example.COM.", "shop/exact", "SNI is matched case-insensitively, without a trailing dot"],
    ["api.example.com", "shop/wildcard", "a wildcard covers one more label"],
    ["a.c.example.com", "shop/wildcard", "or several, as listener hostnames do"],
    ["example.com", "shop/wildcard", "the wildcard's certificate serves its own exact name too"],
    ["x.b.example.com", "shop/deep", "the longest wildcard wins"],
    ["west.test", "a/east-second", "a tie goes to the first cluster, then id, whatever the read order"],
  ])("%s gets %s: %s", (sni, id) => {
    expect(selectCertificate(table, sni)?.id).toBe(id);
  });

  it.each([
    ["a.b.c.example.org", "no name covers it"],
    ["x.y.example.com.evil", "a suffix is not a wildcard match"],
  ])("%s gets no certificate: %s", (sni) => {
    expect(selectCertificate(table, sni)).toBeUndefined();
  });

  it("gives the certificate of a listener without hostname to any SNI no name matches", () => {
    const withDefault = certificateTable([cert("x/named", ["a.test"]), cert("x/any", [], { anyHost: true })]);
    expect(selectCertificate(withDefault, "a.test")?.id).toBe("x/named");
    expect(selectCertificate(withDefault, "other.test")?.id).toBe("x/any");
  });
});

describe("421 Misdirected Request (RFC 9110 §15.5.20)", () => {
  it.each<[string, string | undefined, boolean, string]>([
    ["shop.example.com", "shop.example.com", false, "the Host the certificate was chosen for"],
    ["shop.example.com", "shop.example.com:8443", false, "a port in the Host is not part of the name"],
    ["shop.example.com", "Shop.Example.Com", false, "Host is compared case-insensitively"],
    ["shop.example.com", "api.example.com", true, "a host another certificate is chosen for"],
    ["api.example.com", "www.example.com", false, "a Host the chosen wildcard covers"],
    ["api.example.com", "a.b.example.com", true, "a longer wildcard of the host is another certificate"],
    ["api.example.com", "[::1]:8443", true, "an IP literal no certificate names"],
    ["nothing.test", "other.test", false, "no certificate chosen: nothing to compare with"],
    ["shop.example.com", undefined, false, "no Host: the request is refused elsewhere"],
  ])("SNI %s, Host %s: misdirected %s (%s)", (sni, host, expected) => {
    expect(isMisdirected(table, sni, host)).toBe(expected);
  });

  it("takes any host no other certificate is chosen for on the certificate of a listener without hostname", () => {
    const any = certificateTable([cert("x/any", ["a.test"], { anyHost: true }), cert("x/named", ["n.test"])]);
    expect(isMisdirected(any, "a.test", "b.test")).toBe(false);
    expect(isMisdirected(any, "unknown.test", "a.test")).toBe(false);
    expect(isMisdirected(any, "a.test", "n.test")).toBe(true);
  });
});
