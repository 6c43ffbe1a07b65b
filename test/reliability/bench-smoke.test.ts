import { describe, expect, it } from "vitest";
import { runProxyBench } from "../../bench/proxy/proxy-bench.js";

describe("bench harness smoke", () => {
  it("the proxy bench runs end to end and the edgeslice router answers every request of it with 200", async () => {
    const report = await runProxyBench(
      {
        durationSeconds: 1,
        warmupSeconds: 0,
        connections: 4,
        moderateRate: 200,
        moderateConnections: 2,
        payloads: ["small"],
        proxies: ["edgeslice"],
        profile: false,
        rounds: 1,
        pin: false,
      },
      () => {},
    );
    const cells = report.measurements.map((m) => `${m.target} ${m.mode}`).sort();
    expect(cells).toEqual([
      "direct moderate",
      "direct saturation",
      "edgeslice moderate",
      "edgeslice saturation",
    ]);
    for (const { result } of report.measurements) {
      expect(result.requests).toBeGreaterThan(0);
      expect(result.non2xx + result.errors + result.timeouts).toBe(0);
    }
    // The router's mark-compacts are counted each round (gc-counts.mjs through its probe); the backend's are not.
    const counted = report.measurements.map((m) => [m.target, m.roundsMarkCompacts.length]);
    expect(counted.sort()).toEqual([
      ["direct", 0],
      ["direct", 0],
      ["edgeslice", 1],
      ["edgeslice", 1],
    ]);
  }, 30_000);
});
