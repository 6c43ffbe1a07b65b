import { describe, expect, it } from "vitest";
import { parseRouterConfig } from "../../../functions/core/settings/config.js";
import {
  type ClusterGrants,
  hostsNotGranted,
  mayReach,
  parseClusterGrants,
} from "../../../functions/core/trust/cluster-grants.js";

const EXAMPLE =
  "east=hosts:shop.test,*.east.test networks:10.1.0.0/16,fd00:1::/64; west=hosts:pay.test networks:10.2.0.0/16";

function grantsOf(text: string): ClusterGrants {
  const parsed = parseClusterGrants(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

describe("parsing CLUSTER_GRANTS", () => {
  it("reads each cluster's hosts and networks", () => {
    const grants = grantsOf(EXAMPLE);
    expect([...grants.keys()]).toEqual(["east", "west"]);
    expect(grants.get("east")?.hosts).toEqual(["shop.test", "*.east.test"]);
    expect(grants.get("east")?.networks.map((network) => network.text)).toEqual([
      "10.1.0.0/16",
      "fd00:1::/64",
    ]);
    expect(grants.get("west")?.networks.map((network) => network.text)).toEqual(["10.2.0.0/16"]);
  });

  it("takes one cluster a line, fields in any order, upper-case hosts lowered and a trailing ';'", () => {
    const grants = grantsOf(
      "\n  east = networks:10.1.0.0/16   hosts:Shop.Test ;\n  west=hosts:* networks:0.0.0.0/0,::/0;\n",
    );
    expect(grants.get("east")?.hosts).toEqual(["shop.test"]);
    expect(grants.get("west")?.hosts).toEqual(["*"]);
  });

  it.each([
    ["an entry without '='", "east hosts:a.test networks:10.0.0.0/8", /"east hosts:.*" is not cluster=/],
    [
      "a cluster name that is no DNS label",
      "East_1=hosts:a.test networks:10.0.0.0/8",
      /"East_1" is not a cluster name/,
    ],
    ["an unknown field", "east=hosts:a.test nets:10.0.0.0/8", /east: "nets:10.0.0.0\/8" is neither/],
    ["a field without ':'", "east=hosts networks:10.0.0.0/8", /east: "hosts" is neither/],
    ["no networks", "east=hosts:a.test", /east: needs both hosts: and networks:/],
    ["no hosts", "east=networks:10.0.0.0/8", /east: needs both hosts: and networks:/],
    [
      "a field given twice",
      "east=hosts:a.test hosts:b.test networks:10.0.0.0/8",
      /east: hosts: is given twice/,
    ],
    ["an empty item", "east=hosts:a.test,,b.test networks:10.0.0.0/8", /east: hosts: has an empty item/],
    [
      "a host that is no host name",
      "east=hosts:a_b.test networks:10.0.0.0/8",
      /"a_b.test" is not a host name/,
    ],
    ["a wildcard in the middle", "east=hosts:a.*.test networks:10.0.0.0/8", /"a.\*.test" is not a host name/],
    [
      "a bare address as a network",
      "east=hosts:a.test networks:10.1.2.3",
      /east: "10.1.2.3" is not address\/prefix-length/,
    ],
    ["host bits set", "east=hosts:a.test networks:10.1.2.3/16", /did you mean 10.1.0.0\/16/],
    [
      "a cluster listed twice",
      "east=hosts:a.test networks:10.0.0.0/8;east=hosts:b.test networks:10.0.0.0/8",
      /cluster east is listed twice/,
    ],
    ["nothing but separators", " ; ;", /lists no cluster/],
    [
      "entries separated by a comma",
      "east=hosts:a.test networks:10.0.0.0/8, west=hosts:b.test networks:10.1.0.0/16",
      /^east: "west=" starts another cluster's entry: separate entries with ";"$/,
    ],
    [
      "entries separated by a space",
      "east=hosts:a.test networks:10.0.0.0/8 west=hosts:b.test networks:10.1.0.0/16",
      /^east: "west=" starts another cluster's entry: separate entries with ";"$/,
    ],
    [
      "fields separated by a comma",
      "east=hosts:a.test,networks:10.0.0.0/8",
      /^east: separate hosts:\.\.\. and networks:\.\.\. with a space, not a comma$/,
    ],
    [
      "'=' for ':' in a field",
      "east=hosts=a.test networks=10.0.0.0/8",
      /^east: write hosts:\.\.\., with a colon$/,
    ],
  ])("refuses %s, saying why", (_what, text, message) => {
    const parsed = parseClusterGrants(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(message);
  });

  it("lists every bad entry at once", () => {
    const parsed = parseClusterGrants(
      "east=hosts:a.test;west=hosts:b.test networks:10.0.0.0/8;x_y=hosts:c.test",
    );
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.split("; ")).toHaveLength(2);
  });

  it("is read by the router's config, and a malformed value fails the start naming the variable", () => {
    expect(parseRouterConfig({}).clusterGrants).toBeUndefined();
    expect(parseRouterConfig({ CLUSTER_GRANTS: "  " }).clusterGrants).toBeUndefined();
    expect([...(parseRouterConfig({ CLUSTER_GRANTS: EXAMPLE }).clusterGrants?.keys() ?? [])]).toEqual([
      "east",
      "west",
    ]);
    expect(() => parseRouterConfig({ CLUSTER_GRANTS: "east=hosts:a.test" })).toThrow(
      /^invalid router configuration: CLUSTER_GRANTS must be .*east: needs both hosts: and networks:/,
    );
  });
});

describe("which hosts a cluster may publish", () => {
  const grants = grantsOf(EXAMPLE);
  const east = grants.get("east");

  it.each([
    ["its exact host", ["shop.test"], []],
    ["a host under its wildcard", ["a.east.test"], []],
    ["a host two labels under its wildcard", ["a.b.east.test"], []],
    ["its wildcard itself", ["*.east.test"], []],
    ["a narrower wildcard", ["*.b.east.test"], []],
    ["another cluster's host", ["pay.test"], ["pay.test"]],
    ["the apex its wildcard does not name", ["east.test"], ["east.test"]],
    ["a wildcard that also covers another cluster's host", ["*.test"], ["*.test"]],
    ["a name that only ends like its suffix", ["xeast.test"], ["xeast.test"]],
    ["a route without hostnames (every host)", [], ["*"]],
    ["a route naming one granted and one other host", ["shop.test", "pay.test"], ["pay.test"]],
  ])("%s", (_what, hostnames, refused) => {
    expect(hostsNotGranted(east, hostnames)).toEqual(refused);
  });

  it("grants every host, catch-all routes included, only to '*'", () => {
    const any = grantsOf("all=hosts:* networks:0.0.0.0/0").get("all");
    expect(hostsNotGranted(any, [])).toEqual([]);
    expect(hostsNotGranted(any, ["*.test", "pay.test"])).toEqual([]);
  });

  it("grants nothing to a cluster the setting does not list", () => {
    expect(hostsNotGranted(grants.get("north"), ["north.test"])).toEqual(["north.test"]);
  });
});

describe("which backend addresses a cluster may publish", () => {
  const grants = grantsOf(EXAMPLE);

  it.each([
    ["east", "10.1.3.4", true],
    ["east", "fd00:1::7", true],
    ["east", "10.2.0.5", false],
    ["east", "fd00:2::7", false],
    ["east", "::ffff:10.2.0.5", false],
    ["west", "10.2.0.5", true],
    ["west", "10.1.3.4", false],
    ["north", "10.1.3.4", false],
  ])("%s may reach %s: %s", (cluster, ip, expected) => {
    expect(mayReach(grants.get(cluster), ip)).toBe(expected);
  });

  // A translated address reaches its IPv4 address from wherever the translator sits, which may be another
  // network than the cluster's: a grant of that IPv4 network never covers it, only a grant of its IPv6 form.
  it.each([
    ["10.1.0.0/16", "::ffff:10.1.2.3", true, "IPv4-mapped is the same host"],
    ["10.1.0.0/16", "64:ff9b::10.1.2.3", false, "NAT64 is not covered by the IPv4 network it embeds"],
    ["10.1.0.0/16", "2002:a01:203::1", false, "nor 6to4"],
    ["10.1.0.0/16", "::a01:203", false, "nor IPv4-compatible"],
    ["64:ff9b::/96", "64:ff9b::10.1.2.3", true, "a grant of the NAT64 prefix itself does"],
  ])("%s may reach %s: %s (%s)", (network, ip, expected) => {
    const grant = grantsOf(`nat=hosts:a.test networks:${network}`).get("nat");
    expect(mayReach(grant, ip)).toBe(expected);
  });
});
