import { describe, expect, it } from "vitest";
import { translateRetry } from "../../../../sync/translate/gateway/retry.js";
import { httpRoute, parentConditions, toService, translate } from "./fixtures.js";

describe("HTTPRouteRetry", () => {
  it.each([
    ["none", undefined, { retry: undefined, ignored: [] }],
    ["an empty retry: connection errors, the router's count", {}, { retry: { codes: [] }, ignored: [] }],
    [
      "the official test's first rule",
      { codes: [500], attempts: 3 },
      { retry: { codes: [500], attempts: 3 }, ignored: [] },
    ],
    [
      "codes sorted, each once",
      { codes: [504, 500, 503, 502, 500], attempts: 2 },
      { retry: { codes: [500, 502, 503, 504], attempts: 2 }, ignored: [] },
    ],
    [
      "a backoff",
      { codes: [503], backoff: "100ms" },
      { retry: { codes: [503], backoffMs: 100 }, ignored: [] },
    ],
    ["a zero backoff: no wait", { backoff: "0s" }, { retry: { codes: [] }, ignored: [] }],
    ["4xx codes", { codes: [429, 409] }, { retry: { codes: [409, 429] }, ignored: [] }],
    [
      "more attempts than the router makes",
      { attempts: 50 },
      { retry: { codes: [], attempts: 10 }, ignored: ["retry.attempts above 10"] },
    ],
  ])("reads %s", (_case, raw, expected) => {
    expect(translateRetry(raw)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ["a code below 400", { codes: [399] }],
    ["a code above 599", { codes: [600] }],
    ["a code that is no number", { codes: ["500"] }],
    ["codes that are no list", { codes: 500 }],
    ["zero attempts", { attempts: 0 }],
    ["fractional attempts", { attempts: 1.5 }],
    ["a backoff that is no Duration", { backoff: "1.5s" }],
    ["a retry that is no object", "always"],
  ])("refuses %s", (_case, raw) => {
    expect(translateRetry(raw).ok).toBe(false);
  });

  it("carries the retry into the rule of the record", () => {
    const route = httpRoute("retries", {
      rules: [{ ...toService("infra-backend-v3"), retry: { codes: [500], attempts: 3, backoff: "10ms" } }],
    });
    const result = translate({ httpRoutes: [route] });
    expect(result.routes[0]?.rules[0]?.retry).toEqual({ codes: [500], attempts: 3, backoffMs: 10 });
    expect(parentConditions(result, "infra/retries")).toContain("Accepted=True/Accepted");
  });

  it("drops a rule whose retry it cannot read (PartiallyInvalid), keeping the others", () => {
    const route = httpRoute("odd", {
      rules: [{ ...toService("infra-backend-v1"), retry: { codes: [200] } }, toService("infra-backend-v2")],
    });
    const result = translate({ httpRoutes: [route] });
    expect(result.routes[0]?.rules).toHaveLength(1);
    expect(parentConditions(result, "infra/odd")).toContain("PartiallyInvalid=True/UnsupportedValue");
  });
});
