import { describe, expect, it } from "vitest";
import type { LoadResult } from "../../bench/proxy/load-plan.js";
import { difference, medianOf, pairedRounds, quotient, summariseRounds } from "../../bench/proxy/rounds.js";

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

describe("two targets compared round by round", () => {
  it.each([
    ["ratios", [10, 20, 30], [10, 10, 10], quotient, 2],
    ["differences", [1, 5, 2], [0.5, 1, 2.5], difference, 0.5],
    ["ratios over the rounds both have", [2, 4], [1, 1, 1], quotient, 2],
  ])("take the median of the %s", (_what, a, b, combine, expected) => {
    expect(medianOf(pairedRounds(a, b, combine))).toBe(expected);
  });

  it("are not thrown by slow spells that hit both runs of a round", () => {
    // Rounds 1 and 3 ran while the machine was busy; the two targets were level in every round.
    const ours = [50, 100, 52];
    const theirs = [50, 100, 55];
    expect(medianOf(ours) / medianOf(theirs)).toBeLessThan(0.95);
    expect(medianOf(pairedRounds(ours, theirs, quotient))).toBe(1);
  });
});
