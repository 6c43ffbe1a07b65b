import { describe, expect, it } from "vitest";
import { canonicalJson, mergeAcrossClusters } from "../../../functions/core/routes/clusters.js";
import { chooseBackend } from "../../../functions/core/routes/weights.js";
import type { BackendRef } from "../../../store/routes.js";
import { prefix, route, rule } from "./route-match-fixtures.js";

describe("merging the same route published by several clusters", () => {
  const web = route("httproute:shop/web", { rules: [rule("web")] });
  const webV2 = route("httproute:shop/web", { rules: [rule("web", prefix("/v2"))] });
  const api = route("httproute:shop/api", { rules: [rule("api")] });

  it("serves identical definitions once, from every cluster that publishes them", () => {
    const merged = mergeAcrossClusters([
      { cluster: "west", route: web },
      { cluster: "east", route: structuredClone(web) },
      { cluster: "east", route: api },
    ]);
    expect(merged.routes.map((item) => [item.route.id, item.clusters])).toEqual([
      ["httproute:shop/api", ["east"]],
      ["httproute:shop/web", ["east", "west"]],
    ]);
    expect(merged.conflicts).toEqual([]);
  });

  it("treats key order as irrelevant when comparing definitions", () => {
    const { rules, ...rest } = web;
    const reordered = JSON.parse(JSON.stringify({ rules, ...rest }));
    expect(canonicalJson(reordered)).toBe(canonicalJson(web));
    expect(
      mergeAcrossClusters([
        { cluster: "a", route: web },
        { cluster: "b", route: reordered },
      ]).conflicts,
    ).toEqual([]);
  });

  it.each([
    ["the definition most clusters publish wins", ["a:v2", "b:v1", "c:v1"], ["b", "c"], ["a"]],
    ["a tie goes to the definition whose first cluster sorts first", ["b:v1", "a:v2"], ["a"], ["b"]],
  ])("%s", (_case, publications, served, shadowed) => {
    const published = publications.map((item) => {
      const [cluster, version] = item.split(":") as [string, string];
      return { cluster, route: version === "v1" ? web : webV2 };
    });
    for (const order of [published, [...published].reverse()]) {
      const merged = mergeAcrossClusters(order);
      expect(merged.routes[0]?.clusters).toEqual(served);
      expect(merged.conflicts).toEqual([{ id: "httproute:shop/web", served, shadowed }]);
    }
  });
});

describe("weighted backend choice", () => {
  const a: BackendRef = { service: "shop/a", port: 80, weight: 1 };
  const b: BackendRef = { service: "shop/b", port: 80, weight: 3 };
  const zero: BackendRef = { service: "shop/z", port: 80, weight: 0 };
  const invalid: BackendRef = { invalid: "RefNotPermitted: shop/x", weight: 1 };

  const pick = (backends: BackendRef[], random: number) => {
    const choice = chooseBackend(backends, () => random);
    if (choice.kind === "service") return choice.service;
    return choice.kind === "invalid" ? `invalid:${choice.reason}` : "none";
  };

  it.each([
    ["the first quarter goes to weight 1 of 4", [a, b], 0, "shop/a"],
    ["just under a quarter still goes to weight 1", [a, b], 0.2499, "shop/a"],
    ["a quarter on goes to weight 3", [a, b], 0.25, "shop/b"],
    ["the top of the range goes to the last weighted backend", [a, b, zero], 0.999999999, "shop/b"],
    ["a weight-0 backend never gets a request", [zero, a], 0, "shop/a"],
    [
      "an invalid backend's share is answered as invalid",
      [invalid, a],
      0.1,
      "invalid:RefNotPermitted: shop/x",
    ],
    ["every weight 0 means no backend", [zero, { ...zero, service: "shop/y" }], 0.5, "none"],
    ["no backends means no backend", [], 0.5, "none"],
  ])("%s", (_case, backends, random, expected) => {
    expect(pick(backends as BackendRef[], random as number)).toBe(expected);
  });

  it("splits requests in proportion to the weights (conformance HTTPRouteWeight: 70/30/0)", () => {
    const backends: BackendRef[] = [
      { service: "shop/v1", port: 8080, weight: 70 },
      { service: "shop/v2", port: 8080, weight: 30 },
      { service: "shop/v3", port: 8080, weight: 0 },
    ];
    const counts: Record<string, number> = {};
    for (let step = 0; step < 1000; step += 1) {
      const name = pick(backends, step / 1000);
      counts[name] = (counts[name] ?? 0) + 1;
    }
    expect(counts).toEqual({ "shop/v1": 700, "shop/v2": 300 });
  });
});
