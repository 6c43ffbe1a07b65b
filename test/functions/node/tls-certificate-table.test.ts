import { describe, expect, it } from "vitest";
import { parseClusterGrants } from "../../../functions/core/trust/cluster-grants.js";
import {
  certificateTable,
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
    [
      "west.test",
      "a/east-second",
      "without grants, a tie goes to the first cluster, then id, whatever the read order",
    ],
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

describe("certificates under CLUSTER_GRANTS (issue 35 item 2)", () => {
  const grants = (text: string) => {
    const parsed = parseClusterGrants(text);
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  };
  const granted = certificateTable(
    [
      cert("pay/tls", ["pay.test", "www.pay.test"], { cluster: "east" }),
      cert("evil/www", ["www.pay.test", "*.pay.test", "evil.test"], { cluster: "evil" }),
      cert("aaa/pay", ["pay.test"], { cluster: "aaa" }),
      cert("evil/any", ["evil.test"], { cluster: "evil", anyHost: true }),
      cert("shared/platform", ["shop.shared.test"], { cluster: "platform" }),
      cert("shared/team", ["shop.shared.test"], { cluster: "team" }),
      cert("shared/west", ["api.shared.test"], { cluster: "west" }),
      cert("shared/east", ["api.shared.test"], { cluster: "east" }),
      cert("edge/default", [], { cluster: "edge", anyHost: true }),
    ],
    {
      grants: grants(
        [
          "east=hosts:pay.test,www.pay.test,*.shared.test networks:10.1.0.0/16",
          "evil=hosts:evil.test networks:10.9.0.0/16",
          "platform=hosts:*.shared.test networks:10.2.0.0/16",
          "team=hosts:shop.shared.test networks:10.3.0.0/16",
          "west=hosts:*.shared.test networks:10.4.0.0/16",
          "edge=hosts:* networks:10.5.0.0/16",
        ].join(";"),
      ),
    },
  );

  it.each([
    ["pay.test", "pay/tls", "a cluster the grants do not list (aaa, first by name) never serves one"],
    ["www.pay.test", "pay/tls", "a cluster not granted the name (evil) never serves it, listed first or not"],
    ["x.pay.test", "edge/default", "nor through a wildcard it lists: the granted default takes it"],
    ["evil.test", "evil/any", "a cluster serves the names it is granted (its Secrets by id)"],
    [
      "unknown.test",
      "edge/default",
      "only a cluster granted the host gives the default certificate, not evil's",
    ],
    [
      "shop.shared.test",
      "shared/team",
      "the most specific grant wins (team's exact host over platform's *.)",
    ],
    [
      "api.shared.test",
      "shared/east",
      "equal grants: the cluster listed first in CLUSTER_GRANTS, not by name",
    ],
  ])("%s gets %s: %s", (sni, id) => {
    expect(selectCertificate(granted, sni)?.id).toBe(id);
  });

  it("gives a client without SNI the default certificate of a cluster granted every host only", () => {
    expect(selectCertificate(granted, undefined)?.id).toBe("edge/default");
    const withoutStar = certificateTable(
      [cert("evil/any", ["evil.test"], { cluster: "evil", anyHost: true })],
      {
        grants: grants("evil=hosts:evil.test networks:10.9.0.0/16"),
      },
    );
    expect(selectCertificate(withoutStar, undefined)).toBeUndefined();
    expect(selectCertificate(withoutStar, "other.test")).toBeUndefined();
    expect(selectCertificate(withoutStar, "evil.test")?.id).toBe("evil/any");
  });

  it("puts the router's own cluster first without grants", () => {
    const table = certificateTable(
      [cert("a/first", ["x.test"], { cluster: "aaa" }), cert("b/own", ["x.test"], { cluster: "zzz" })],
      { ownCluster: "zzz" },
    );
    expect(selectCertificate(table, "x.test")?.id).toBe("b/own");
  });
});
