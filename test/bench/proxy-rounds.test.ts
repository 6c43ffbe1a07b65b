import { describe, expect, it } from "vitest";
import type { LoadResult } from "../../bench/proxy/load-plan.js";
import { medianOf, summariseRounds } from "../../bench/proxy/rounds.js";

const round = (rps: number, p50Ms: number, p99Ms: number): LoadResult => ({
  requests: rps * 5,
  rps,
  p50Ms,
  p99Ms,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  bytesPerSecond: 0,
});

describe("a bench cell's rounds", () => {
  it.each([
    [[], Number.NaN],
    [[3], 3],
    [[5, 1, 3], 3],
    [[4, 1, 3, 2], 2],
  ])("have %j as median %d", (values, expected) => {
    expect(medianOf(values)).toBe(expected);
  });

  it("report the round of median rps with the median p50 and p99 over every round", () => {
    const summary = summariseRounds([round(900, 0.5, 9), round(1000, 0.4, 1), round(1100, 0.6, 2)]);
    expect([summary?.rps, summary?.p50Ms, summary?.p99Ms]).toEqual([1000, 0.5, 2]);
  });

  it("at a fixed rate take p99 from every round, not from whichever round sorted to the middle", () => {
    const summary = summariseRounds([round(2000, 0.4, 9), round(2000, 0.4, 1), round(2000, 0.4, 1.2)]);
    expect(summary?.p99Ms).toBe(1.2);
  });

  it("of none are nothing", () => {
    expect(summariseRounds([])).toBeUndefined();
  });
});
