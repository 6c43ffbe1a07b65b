import { describe, expect, it } from "vitest";
import { listenerPoolKey } from "../../../functions/core/routes/listener-ports.js";
import { isMisdirected, type MisdirectionFacts } from "../../../functions/core/tls/misdirected.js";

/** One Gateway on 443 with the four HTTPS listeners of the official base (gateway-api v1.6.1), in cluster east. */
const pools = new Map([
  [
    listenerPoolKey("east", "infra/https", 443),
    ["", "second-example.org", "*.wildcard.org", "fourth-example.wildcard.org"],
  ],
  [listenerPoolKey("east", "infra/http", 80), ["", "plain.test"]],
]);

const facts = (serverName: string | undefined, host: string, extra: Partial<MisdirectionFacts> = {}) => ({
  serverName,
  host,
  port: undefined,
  pools,
  decides: () => true,
  ...extra,
});

describe("421 when the host is not served by the listener the SNI chose (RFC 9110 §15.5.20)", () => {
  it.each<[string, string, boolean, string]>([
    ["example.org", "example.org", false, "the listener without hostname serves its own host"],
    ["example.org", "second-example.org", true, "a host of another listener, over the catch-all's SNI"],
    ["example.org", "unknown-example.org", false, "a host no listener names belongs to the catch-all too"],
    ["second-example.org", "example.org", true, "the catch-all's host over a named listener's SNI"],
    ["second-example.org", "unknown-example.org", true, "so is any host the named listener does not take"],
    ["third-example.wildcard.org", "fith-example.wildcard.org", false, "one wildcard listener takes both"],
    ["third-example.wildcard.org", "fourth-example.wildcard.org", true, "the exact listener takes the host"],
    ["fourth-example.wildcard.org", "fith-example.wildcard.org", true, "the wildcard takes the host"],
    ["unknown-example.org", "example.org", false, "both belong to the listener without hostname"],
    ["second-example.org.", "second-example.org", false, "an SNI's trailing dot is not part of the name"],
    [
      "third-example.wildcard.org",
      "plain.test",
      true,
      "listeners of port 443 decide when the Host has no port",
    ],
  ])("SNI %s, host %s: %s (%s)", (sni, host, expected) => {
    expect(isMisdirected(facts(sni, host))).toBe(expected);
  });

  it("never misdirects a client that sent no SNI: it is routed by its host", () => {
    expect(isMisdirected(facts(undefined, "second-example.org"))).toBe(false);
  });

  it("compares the listeners of the Host's port when a listener uses it", () => {
    expect(isMisdirected(facts("x.test", "plain.test", { port: 80 }))).toBe(true);
    expect(isMisdirected(facts("x.test", "y.test", { port: 80 }))).toBe(false);
  });

  it("consults only the listeners of clusters that may claim the SNI's name (CLUSTER_GRANTS)", () => {
    const evil = new Map([...pools, [listenerPoolKey("evil", "infra/https", 443), ["pay.test", ""]]]);
    const decides = (cluster: string) => cluster !== "evil";
    expect(isMisdirected(facts("shop.test", "pay.test", { pools: evil }))).toBe(true);
    expect(isMisdirected(facts("shop.test", "pay.test", { pools: evil, decides }))).toBe(false);
  });
});

describe("421 when the host would get another certificate than the SNI did", () => {
  const certificates = new Map([
    ["shop.example.com", "shop"],
    ["api.example.com", "wildcard"],
    ["www.example.com", "wildcard"],
  ]);
  const certificateOf = (name: string) => certificates.get(name);
  it.each<[string, string, boolean, string]>([
    ["shop.example.com", "shop.example.com", false, "the host the certificate was chosen for"],
    ["shop.example.com", "api.example.com", true, "a host another certificate is chosen for"],
    ["api.example.com", "www.example.com", false, "a host the chosen certificate covers"],
    ["api.example.com", "[::1]", true, "an IP literal no certificate names"],
    ["nothing.test", "other.test", false, "no certificate chosen: nothing to compare with"],
  ])("SNI %s, host %s: misdirected %s (%s)", (sni, host, expected) => {
    expect(isMisdirected(facts(sni, host, { pools: new Map(), certificateOf }))).toBe(expected);
  });
});
