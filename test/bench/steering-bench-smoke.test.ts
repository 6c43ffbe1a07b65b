import { describe, expect, it } from "vitest";
import { formatSteeringReport } from "../../bench/steering/report.js";
import { runSteeringBench } from "../../bench/steering/steering-bench.js";

describe("steering bench smoke", () => {
  it("prints the issue's three lines from one run, the latency policy ahead of random, and traffic moved", async () => {
    const report = await runSteeringBench(
      { warmup: 60, requests: 100, concurrency: 4, failoverTrials: 1 },
      () => {},
    );
    const text = formatSteeringReport(report);
    expect(text).toMatch(/^steering p50 \(latency policy\): \d+\.\d ms$/m);
    expect(text).toMatch(/^steering p50 \(random\): \d+\.\d ms$/m);
    expect(text).toMatch(/^steering failover \(nearest cluster fails\): \d+ ms$/m);
    // Orders, never absolute times: random sends two thirds of the requests to the slower clusters.
    expect(report.latencyP50Ms).toBeLessThan(report.randomP50Ms);
    expect(report.latencyShares.fra).toBeGreaterThan(0.5);
    expect(report.failovers).toHaveLength(1);
    expect(report.failovers[0]?.failedRequests).toBeLessThanOrEqual(5);
  });
});
