import { describe, expect, it } from "vitest";
import { runConvergenceBench } from "../../bench/convergence/convergence-bench.js";

describe("convergence bench smoke", () => {
  it("runs the sync against the fake API server end to end and sees every change it applied reach the reader", async () => {
    // The development runner: the build is the production test's (test/build/), not this one's.
    process.env.BENCH_SYNC_RUNNER = "tsx";
    const [result] = await runConvergenceBench(
      {
        runs: [{ services: 10, label: "smoke" }],
        endpointsPerService: 5,
        changesPerSecond: 20,
        changeSeconds: 1,
      },
      () => {},
    );
    expect(result?.services).toBe(10);
    expect(result?.changes).toBeGreaterThan(0);
    // Every change applied at the fake API server was seen in the reader's snapshot.
    expect(result?.observed).toBe(result?.changes);
  }, 60_000);
});
