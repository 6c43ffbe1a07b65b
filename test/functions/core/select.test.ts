import { describe, expect, it } from "vitest";
import { matchRequest } from "../../../functions/core/routing.js";
import type { BackendCandidate } from "../../../functions/core/selection/selection.js";
import {
  backendCandidates,
  chooseFamily,
  selectTiers,
  zoneSubset,
} from "../../../functions/core/selection/selector.js";
import type { IpFamilyPolicy } from "../../../functions/core/settings/config.js";
import { buildSnapshotRoutes } from "../../../functions/core/snapshot/snapshot-routes.js";
import { ep, serviceRecord, snapshotOf } from "../fixtures.js";

const v4 = [ep("10.0.0.1")];
const v6 = [ep("fd00::1")];

describe("chooseFamily", () => {
  it.each<[string, IpFamilyPolicy, Parameters<typeof serviceRecord>[0], string | undefined]>([
    ["takes IPv4 when preferred and present", "PreferIPv4", { cluster: "a", ipv4: v4, ipv6: v6 }, "ipv4"],
    ["takes IPv6 when preferred and present", "PreferIPv6", { cluster: "a", ipv4: v4, ipv6: v6 }, "ipv6"],
    ["falls to IPv6 when IPv4 has no endpoints", "PreferIPv4", { cluster: "a", ipv6: v6 }, "ipv6"],
    [
      "takes a family not in fallback over a preferred one in fallback",
      "PreferIPv4",
      { cluster: "a", ipv4: v4, ipv6: v6, ipv4Fallback: true },
      "ipv6",
    ],
    [
      "keeps the preferred family when both are in fallback",
      "PreferIPv4",
      { cluster: "a", ipv4: v4, ipv6: v6, ipv4Fallback: true, ipv6Fallback: true },
      "ipv4",
    ],
    ["never switches family under a strict policy", "IPv4", { cluster: "a", ipv6: v6 }, undefined],
    [
      "uses the fallback set under a strict policy",
      "IPv6",
      { cluster: "a", ipv6: v6, ipv6Fallback: true },
      "ipv6",
    ],
    ["has no family when neither has endpoints", "PreferIPv6", { cluster: "a" }, undefined],
  ])("%s", (_name, policy, record, expected) => {
    expect(chooseFamily(serviceRecord(record), policy).family).toBe(expected);
  });
});

describe("zoneSubset (kube-proxy hint rule)", () => {
  const inZ1 = ep("10.0.0.1", 80, { forZones: ["z1"] });
  const hinted = [inZ1, ep("10.0.0.2", 80, { forZones: ["z2"] })];
  it.each([
    ["keeps the endpoints hinted for the zone", hinted, "z1", ["10.0.0.1"], "applied"],
    [
      "ignores hints unless every endpoint carries them",
      [inZ1, ep("10.0.0.3")],
      "z1",
      ["10.0.0.1", "10.0.0.3"],
      "not-every-endpoint-hinted",
    ],
    [
      "falls back to all when none is hinted for the zone",
      hinted,
      "z9",
      ["10.0.0.1", "10.0.0.2"],
      "no-endpoint-for-zone",
    ],
    ["does nothing without a zone", hinted, undefined, ["10.0.0.1", "10.0.0.2"], "no-zone-configured"],
  ] as const)("%s", (_name, endpoints, zone, ips, hints) => {
    const result = zoneSubset(endpoints, zone);
    expect(result.endpoints.map((e) => e.ip)).toEqual(ips);
    expect(result.hints).toBe(hints);
  });
});

/** The backends of default/app port 80 in every cluster serving app.example. */
function routeOf(...clusters: Parameters<typeof snapshotOf>[0]): BackendCandidate[] {
  const routes = buildSnapshotRoutes(snapshotOf(clusters));
  const found = matchRequest(routes, "app.example", { path: "/", method: "GET", headers: new Headers() });
  if (!found) throw new Error("fixture has no route");
  return backendCandidates(found.entry, "default/app", 80);
}

describe("selectTiers", () => {
  const local = serviceRecord({
    cluster: "a",
    ipv4: [ep("10.0.0.1", 80, { forZones: ["z1"] }), ep("10.0.0.2", 80, { forZones: ["z2"] })],
  });
  const remote = serviceRecord({ cluster: "b", ipv4: [ep("10.1.0.1", 80)] });
  const route = routeOf({ name: "a", records: [local] }, { name: "b", records: [remote] });

  it.each([
    [
      "orders own zone, own cluster, then the rest",
      { cluster: "a", zone: "z1" },
      [
        ["local-zone", ["10.0.0.1:80"]],
        ["local", ["10.0.0.2:80"]],
        ["remote", ["10.1.0.1:80"]],
      ],
    ],
    [
      "puts the whole own cluster first without a zone",
      { cluster: "a", zone: undefined },
      [
        ["local", ["10.0.0.1:80", "10.0.0.2:80"]],
        ["remote", ["10.1.0.1:80"]],
      ],
    ],
    [
      "treats every cluster alike without ROUTER_CLUSTER",
      { cluster: undefined, zone: "z1" },
      [["all", ["10.0.0.1:80", "10.0.0.2:80", "10.1.0.1:80"]]],
    ],
    [
      "has only remote tiers when the own cluster does not serve the route",
      { cluster: "c", zone: "z1" },
      [["remote", ["10.0.0.1:80", "10.0.0.2:80", "10.1.0.1:80"]]],
    ],
  ] as const)("%s", (_name, where, expected) => {
    const selection = selectTiers("default/app", route, { ipFamily: "PreferIPv4", ...where });
    expect(selection.tiers.map((t) => [t.name, t.backends.map((b) => b.address)])).toEqual(expected);
  });

  it("prints IPv6 backends as [addr]:port", () => {
    const selection = selectTiers(
      "default/app",
      routeOf({ name: "a", records: [serviceRecord({ cluster: "a", ipv6: v6 })] }),
      {
        ipFamily: "PreferIPv4",
        cluster: undefined,
        zone: undefined,
      },
    );
    expect(selection.addresses).toEqual(["[fd00::1]:8080"]);
  });

  it.each([
    [
      "the own cluster",
      { cluster: "a", zone: "z1" },
      [
        ["remote", ["10.1.0.1:80"]],
        ["fallback", ["10.0.0.9:80"]],
      ],
    ],
    [
      "no cluster",
      { cluster: undefined, zone: undefined },
      [
        ["all", ["10.1.0.1:80"]],
        ["fallback", ["10.0.0.9:80"]],
      ],
    ],
  ] as const)(
    "tries terminating endpoints of %s only after every ready endpoint elsewhere",
    (_who, where, expected) => {
      const terminatingOnly = serviceRecord({ cluster: "a", ipv4: [ep("10.0.0.9", 80)], ipv4Fallback: true });
      const selection = selectTiers(
        "default/app",
        routeOf({ name: "a", records: [terminatingOnly] }, { name: "b", records: [remote] }),
        {
          ipFamily: "PreferIPv4",
          ...where,
        },
      );
      expect(selection.tiers.map((t) => [t.name, t.backends.map((b) => b.address)])).toEqual(expected);
    },
  );

  it("lists no backends for a route whose clusters have no endpoints", () => {
    const selection = selectTiers(
      "default/app",
      routeOf({ name: "a", records: [serviceRecord({ cluster: "a" })] }),
      {
        ipFamily: "PreferIPv4",
        cluster: "a",
        zone: undefined,
      },
    );
    expect(selection.tiers).toEqual([]);
    expect(selection.addresses).toEqual([]);
  });
});
