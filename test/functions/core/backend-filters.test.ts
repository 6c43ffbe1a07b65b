import { describe, expect, it } from "vitest";
import { rulePlan } from "../../../functions/core/forwarding/filters.js";
import { thenModifier } from "../../../store/filters/header-modifier.js";
import type { RouteRule } from "../../../store/routes.js";

const modifier = (set: [string, string][], remove: string[] = []) => ({
  set: set.map(([name, value]) => ({ name, value })),
  add: [],
  remove,
});

describe("filters of a backendRef after the rule's", () => {
  const rule: RouteRule = {
    matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [] }],
    filters: {
      requestHeaders: modifier([
        ["x-rule", "1"],
        ["x-shared", "rule"],
      ]),
    },
    backends: [
      {
        service: "infra/v1",
        port: 8080,
        weight: 1,
        filters: { requestHeaders: modifier([["backend", "v1"]], ["x-shared"]) },
      },
      { service: "infra/v2", port: 8080, weight: 1 },
    ],
  };

  it.each([
    [
      "the first backend: the rule's fields, then its own, its removal taking the rule's x-shared",
      0,
      [
        ["x-rule", "1"],
        ["backend", "v1"],
      ],
    ],
    [
      "the second backend: the rule's fields only",
      1,
      [
        ["x-rule", "1"],
        ["x-shared", "rule"],
      ],
    ],
  ])("sends to %s", (_case, index, expected) => {
    expect(rulePlan(rule, index).requestHeaders?.append).toEqual(expected);
  });

  it("compiles each backend's plan once", () => {
    expect(rulePlan(rule, 0)).toBe(rulePlan(rule, 0));
  });

  it("keeps either modifier as it is when the other is absent", () => {
    const only = { drop: new Set(["a"]), append: [] };
    expect(thenModifier(only, undefined)).toBe(only);
    expect(thenModifier(undefined, only)).toBe(only);
  });
});
