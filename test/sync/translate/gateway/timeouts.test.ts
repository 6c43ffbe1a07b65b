import { describe, expect, it } from "vitest";
import { durationMs, translateTimeouts } from "../../../../sync/translate/gateway/timeouts.js";
import { httpRoute, parentConditions, toService, translate } from "./fixtures.js";

describe("HTTPRouteTimeouts", () => {
  it.each([
    ["500ms", 500],
    ["1s", 1_000],
    ["1h30m", 5_400_000],
    ["1m500ms", 60_500],
    ["0s", 0],
    ["1.5s", undefined],
    ["10", undefined],
    ["-1s", undefined],
  ])("reads the Duration %s as %s ms", (text, expected) => {
    expect(durationMs(text)).toBe(expected);
  });

  it.each([
    [
      "both",
      { request: "2s", backendRequest: "500ms" },
      { ok: true, value: { requestMs: 2_000, backendRequestMs: 500 } },
    ],
    ["a zero, which leaves the router's limit", { request: "0s" }, { ok: true, value: undefined }],
    ["none", undefined, { ok: true, value: undefined }],
    ["backendRequest longer than request", { request: "1s", backendRequest: "2s" }, { ok: false }],
    ["a value that is no Duration", { request: "soon" }, { ok: false }],
  ])("translates %s", (_case, raw, expected) => {
    expect(translateTimeouts(raw)).toMatchObject(expected);
  });

  it("carries the timeouts into the rule of the record", () => {
    const route = httpRoute("slow", {
      rules: [{ ...toService("infra-backend-v1"), timeouts: { request: "500ms" } }],
    });
    const result = translate({ httpRoutes: [route] });
    expect(result.routes[0]?.rules[0]?.timeouts).toEqual({ requestMs: 500 });
    expect(parentConditions(result, "infra/slow")).toContain("Accepted=True/Accepted");
  });

  it("drops a rule whose timeouts it cannot read (PartiallyInvalid), keeping the others", () => {
    const route = httpRoute("odd", {
      rules: [
        { ...toService("infra-backend-v1"), timeouts: { request: "soon" } },
        toService("infra-backend-v2"),
      ],
    });
    const result = translate({ httpRoutes: [route] });
    expect(result.routes[0]?.rules).toHaveLength(1);
    expect(parentConditions(result, "infra/odd")).toContain("PartiallyInvalid=True/UnsupportedValue");
  });
});
