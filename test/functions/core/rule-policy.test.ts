import { describe, expect, it } from "vitest";
import type { PolicyDeps } from "../../../functions/core/forwarding/proxy-policy.js";
import { withRulePolicy } from "../../../functions/core/forwarding/rule-policy.js";

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
    const settings = withRulePolicy(deps, { timeouts, retry: undefined }).settings;
    expect([settings.tryTimeoutMs, settings.totalTimeoutMs]).toEqual([tryMs, totalMs]);
    expect(settings.retries).toBe(2);
    expect(settings.routeRetry).toBeUndefined();
  });

  it("gives the router's own dependencies back for a rule without timeouts or retry", () => {
    expect(withRulePolicy(deps, { timeouts: undefined, retry: undefined })).toBe(deps);
  });

  it("derives one object per rule and router, not one per request", () => {
    const rule = { timeouts: { requestMs: 500 }, retry: { codes: [500] } };
    expect(withRulePolicy(deps, rule)).toBe(withRulePolicy(deps, rule));
  });
});

describe("a rule's retry in place of the router's retry rules", () => {
  it.each([
    ["attempts replace UPSTREAM_RETRIES", { codes: [500], attempts: 3 }, 3, [500], 0],
    ["without attempts the router's count stays", { codes: [502, 503] }, 2, [502, 503], 0],
    ["a backoff is carried", { codes: [], backoffMs: 100 }, 2, [], 100],
  ])("%s", (_case, retry, retries, codes, backoffMs) => {
    const settings = withRulePolicy(deps, { timeouts: undefined, retry }).settings;
    expect(settings.retries).toBe(retries);
    expect([...(settings.routeRetry?.codes ?? [])]).toEqual(codes);
    expect(settings.routeRetry?.backoffMs).toBe(backoffMs);
    expect([settings.tryTimeoutMs, settings.totalTimeoutMs]).toEqual([10_000, 30_000]);
  });

  it("keeps the rule's timeouts beside its retry", () => {
    const settings = withRulePolicy(deps, {
      timeouts: { requestMs: 2_000 },
      retry: { codes: [503], attempts: 1 },
    }).settings;
    expect([settings.tryTimeoutMs, settings.totalTimeoutMs, settings.retries]).toEqual([2_000, 2_000, 1]);
  });
});
