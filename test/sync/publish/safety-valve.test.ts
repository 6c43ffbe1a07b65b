import { describe, expect, it } from "vitest";
import { SCHEMA_VERSION, type ServiceRecord } from "../../../store/records.js";
import {
  DEFAULT_VALVE_CONFIG,
  endpointCount,
  judgeChange,
  SafetyValve,
  type ValveConfig,
} from "../../../sync/publish/safety-valve.js";

function withEndpoints(ipv4: string[], ipv6: string[] = []): ServiceRecord {
  return {
    v: SCHEMA_VERSION,
    cluster: "east",
    service: "shop/web",
    hosts: ["web.example.com"],
    pathPrefix: "/",
    port: { name: "http", number: 80 },
    ipv4: { endpoints: ipv4.map((ip) => ({ ip, port: 8080 })), fallback: false, draining: [] },
    ipv6: { endpoints: ipv6.map((ip) => ({ ip, port: 8080 })), fallback: false, draining: [] },
  };
}

const ips = (count: number, base = 1) => Array.from({ length: count }, (_, i) => `10.0.0.${base + i}`);
const config: ValveConfig = DEFAULT_VALVE_CONFIG;

describe("judgeChange", () => {
  it.each([
    { case: "a first publish", before: undefined, after: 0, verdict: "publish" },
    { case: "a growth", before: 2, after: 5, verdict: "publish" },
    { case: "losing exactly half (4 → 2)", before: 4, after: 2, verdict: "publish" },
    { case: "losing more than half (4 → 1)", before: 4, after: 1, verdict: "hold" },
    { case: "losing everything (10 → 0)", before: 10, after: 0, verdict: "hold" },
    { case: "losing 2 of 2", before: 2, after: 0, verdict: "hold" },
    {
      case: "losing the only endpoint (1 → 0), below the minimum loss",
      before: 1,
      after: 0,
      verdict: "publish",
    },
    { case: "losing 2 of 3", before: 3, after: 1, verdict: "hold" },
    { case: "an unchanged count", before: 3, after: 3, verdict: "publish" },
  ])("decides $verdict for $case", ({ before, after, verdict }) => {
    const published = before === undefined ? undefined : withEndpoints(ips(before));
    const result = judgeChange({
      published,
      next: withEndpoints(ips(after)),
      heldSince: undefined,
      now: 1000,
      config,
    });
    expect(result.action).toBe(verdict);
  });

  it("publishes a rollout that replaces every endpoint with as many new ones", () => {
    const result = judgeChange({
      published: withEndpoints(ips(6, 1)),
      next: withEndpoints(ips(6, 100)),
      heldSince: undefined,
      now: 0,
      config,
    });
    expect(result.action).toBe("publish");
  });

  it("counts both families: losing the IPv6 half of a dual-stack Service is not a mass removal", () => {
    const published = withEndpoints(ips(3), ["fd00::1", "fd00::2", "fd00::3"]);
    const next = withEndpoints(ips(3));
    expect(endpointCount(published)).toBe(6);
    expect(judgeChange({ published, next, heldSince: undefined, now: 0, config }).action).toBe("publish");
  });

  it("holds for holdMs from the first sighting, then publishes the reduced state", () => {
    const published = withEndpoints(ips(10));
    const next = withEndpoints(ips(1));
    const first = judgeChange({ published, next, heldSince: undefined, now: 5_000, config });
    expect(first).toEqual({
      action: "hold",
      heldSince: 5_000,
      releaseAt: 5_000 + config.holdMs,
      before: 10,
      after: 1,
    });
    const during = judgeChange({ published, next, heldSince: 5_000, now: 5_000 + config.holdMs - 1, config });
    expect(during.action).toBe("hold");
    const after = judgeChange({ published, next, heldSince: 5_000, now: 5_000 + config.holdMs, config });
    expect(after.action).toBe("publish");
  });

  it.each([
    { maxLossFraction: 0.9, minLoss: 2, before: 10, after: 2, verdict: "publish" },
    { maxLossFraction: 0.9, minLoss: 2, before: 10, after: 0, verdict: "hold" },
    { maxLossFraction: 0.5, minLoss: 5, before: 4, after: 0, verdict: "publish" },
    { maxLossFraction: 0, minLoss: 1, before: 4, after: 3, verdict: "hold" },
  ])("honours fraction $maxLossFraction and minimum $minLoss: $before → $after is $verdict", (row) => {
    const result = judgeChange({
      published: withEndpoints(ips(row.before)),
      next: withEndpoints(ips(row.after)),
      heldSince: undefined,
      now: 0,
      config: { maxLossFraction: row.maxLossFraction, minLoss: row.minLoss, holdMs: 1000 },
    });
    expect(result.action).toBe(row.verdict);
  });
});

describe("SafetyValve", () => {
  it("keeps the first hold time across re-checks and forgets it once the Service recovers", () => {
    const valve = new SafetyValve({ maxLossFraction: 0.5, minLoss: 2, holdMs: 100 });
    const published = withEndpoints(ips(4));
    const first = valve.judge("shop/web", published, withEndpoints(ips(0)), 0);
    const again = valve.judge("shop/web", published, withEndpoints(ips(1)), 60);
    expect(first.action === "hold" && again.action === "hold" && again.heldSince).toBe(0);
    expect(valve.judge("shop/web", published, withEndpoints(ips(4)), 80).action).toBe("publish");
    const fresh = valve.judge("shop/web", published, withEndpoints(ips(0)), 90);
    expect(fresh.action === "hold" && fresh.releaseAt).toBe(190);
  });

  it("starts a new hold after clear", () => {
    const valve = new SafetyValve({ maxLossFraction: 0.5, minLoss: 2, holdMs: 100 });
    const published = withEndpoints(ips(4));
    valve.judge("shop/web", published, withEndpoints([]), 0);
    valve.clear("shop/web");
    const verdict = valve.judge("shop/web", published, withEndpoints([]), 500);
    expect(verdict.action === "hold" && verdict.heldSince).toBe(500);
  });
});
