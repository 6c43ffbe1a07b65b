import { describe, expect, it } from "vitest";
import type { PolicyDeps } from "../../../functions/core/proxy-policy.js";
import { withRuleTimeouts } from "../../../functions/core/rule-timeouts.js";

const deps = {
  settings: { tryTimeoutMs: 10_000, totalTimeoutMs: 30_000, retries: 2, clientBodyIdleTimeoutMs: 60_000 },
} as unknown as PolicyDeps;

describe("a rule's timeouts in place of the router's limits", () => {
  it.each([
    ["request alone bounds the request and caps each attempt", { requestMs: 500 }, [500, 500]],
    ["backendRequest alone bounds each attempt", { backendRequestMs: 700 }, [700, 30_000]],
    ["both", { requestMs: 5_000, backendRequestMs: 1_000 }, [1_000, 5_000]],
    [
      "a request longer than the router's try timeout keeps that per attempt",
      { requestMs: 60_000 },
      [10_000, 60_000],
    ],
  ])("%s", (_case, timeouts, [tryMs, totalMs]) => {
    const settings = withRuleTimeouts(deps, timeouts).settings;
    expect([settings.tryTimeoutMs, settings.totalTimeoutMs]).toEqual([tryMs, totalMs]);
    expect(settings.retries).toBe(2);
  });

  it("gives the router's own dependencies back for a rule without timeouts", () => {
    expect(withRuleTimeouts(deps, undefined)).toBe(deps);
  });

  it("derives one object per rule and router, not one per request", () => {
    const timeouts = { requestMs: 500 };
    expect(withRuleTimeouts(deps, timeouts)).toBe(withRuleTimeouts(deps, timeouts));
  });
});
