import { describe, expect, it } from "vitest";
import { formatWorkersReport } from "../../bench/workers/report.js";
import { runWorkersBench, WORKERS_OPERATIONS, WORKERS_READERS } from "../../bench/workers/workers-bench.js";

describe("workers bench smoke", () => {
  it("measures the whole-store reload at two sizes and prints the issue's lines, and the delta reader next to it", async () => {
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

    for (const result of results) {
      const delta = result.readers.find((reader) => reader.reader === "delta")?.operations;
      if (!delta) throw new Error("no delta figures");
      // The bounds: nothing changed is one round trip under 1 KiB; a cold request at most 3.
      expect(delta["refresh-unchanged"].wire.roundTrips).toBe(1);
      expect(delta["refresh-unchanged"].wire.bytes).toBeLessThan(1024);
      expect(delta["cold-request"].wire.roundTrips).toBeLessThanOrEqual(3);
      expect(delta["refresh-one-change"].wire.bytesToClient).toBeLessThan(result.recordBytes);
    }
    // Flat: four times the Services, the same delta traffic give or take the digits of ids and addresses.
    const [small, large] = results.map(
      (result) => result.readers.find((reader) => reader.reader === "delta")?.operations,
    );
    for (const operation of WORKERS_OPERATIONS) {
      const ratio = (large?.[operation].wire.bytes ?? 0) / (small?.[operation].wire.bytes ?? 1);
      expect(ratio).toBeLessThan(1.1);
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
    }
  }, 20_000);
});
