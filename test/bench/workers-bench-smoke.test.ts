import { describe, expect, it } from "vitest";
import { formatWorkersReport } from "../../bench/workers/report.js";
import { runWorkersBench, WORKERS_OPERATIONS, WORKERS_READERS } from "../../bench/workers/workers-bench.js";

describe("workers bench smoke", () => {
  it("measures the whole-store reload at two sizes and prints the issue's lines, delta as n/a until it exists", async () => {
    const results = await runWorkersBench(
      { sizes: [5, 20], endpointsPerService: 20, cpuRuns: 1, readers: WORKERS_READERS },
      () => {},
    );
    expect(results.map((result) => result.services)).toEqual([5, 20]);
    for (const result of results) {
      const whole = result.readers.find((reader) => reader.reader === "whole-store reload")?.operations;
      if (!whole) throw new Error("no whole-store figures");
      for (const operation of WORKERS_OPERATIONS) {
        const { wire } = whole[operation];
        // One connection per load, set up, read, closed: nothing outlives the request.
        expect(wire.connections).toBe(1);
        expect(wire.byKind.handshake.roundTrips).toBeGreaterThan(0);
        expect(wire.byKind.close.roundTrips).toBe(1);
        // Every load carries every record, changed or not.
        expect(wire.bytesToClient).toBeGreaterThan(result.recordBytes);
        expect(whole[operation].cpuMicros).toBeGreaterThan(0);
      }
    }

    const report = formatWorkersReport(results);
    for (const services of [5, 20]) {
      expect(report).toMatch(
        new RegExp(
          `^workers refresh \\(nothing changed, ${services} services\\): \\d+ round trips, \\d+ bytes$`,
          "m",
        ),
      );
      expect(report).toMatch(
        new RegExp(
          `^workers refresh \\(one change, ${services} services\\): \\d+ round trips, \\d+ bytes$`,
          "m",
        ),
      );
      expect(report).toMatch(
        new RegExp(`^workers cold request \\(${services} services\\): \\d+ round trips, \\d+ bytes$`, "m"),
      );
      expect(report).toContain(`workers cold request (${services} services): n/a`);
    }
  }, 20_000);
});
