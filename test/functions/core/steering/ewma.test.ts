import { describe, expect, it } from "vitest";
import { decayedAverage } from "../../../../functions/core/steering/ewma.js";

/** τ = 1 s; `count` far past the warm-up, so only time decides the weight. */
const LATER = 1_000_000;

describe("time-decayed EWMA", () => {
  it.each<[string, number | undefined, number, number, number, number]>([
    // [name, previous, sample, elapsed ms, samples so far, expected]
    ["takes the first sample as the average", undefined, 42, 0, 1, 42],
    [
      "moves next to nothing for a sample in the same millisecond (1/n of the gap)",
      100,
      10,
      0,
      LATER,
      100 - 90 / LATER,
    ],
    ["keeps e^-1 of the gap after one time constant", 100, 10, 1000, LATER, 10 + 90 * Math.exp(-1)],
    ["keeps e^-2 of the gap after two time constants", 100, 10, 2000, LATER, 10 + 90 * Math.exp(-2)],
    ["keeps e^-0.01 of the gap after 10 ms", 100, 10, 10, LATER, 10 + 90 * Math.exp(-0.01)],
    ["all but forgets the past after a long quiet spell", 100, 10, 60_000, LATER, 10],
    ["treats a clock that went back as no time passed", 100, 10, -50, LATER, 100 - 90 / LATER],
    ["rises toward a slower sample the same way", 10, 100, 1000, LATER, 100 - 90 * Math.exp(-1)],
    ["gives the second sample half the weight however close it came", 100, 10, 0, 2, 55],
    ["gives the tenth sample a tenth", 100, 10, 0, 10, 91],
    ["lets time weigh more than the count when more time passed", 100, 10, 1000, 10, 10 + 90 * Math.exp(-1)],
  ])("%s", (_name, previous, sample, elapsed, count, expected) => {
    expect(decayedAverage(previous, sample, elapsed, 1000, count)).toBeCloseTo(expected, 9);
  });

  it("starts as the plain mean of the first samples, so one slow first answer does not stick", () => {
    const samples = [40, 5, 5, 5, 5, 5, 5, 5, 5, 5];
    let average: number | undefined;
    samples.forEach((sample, i) => {
      average = decayedAverage(average, sample, 0, 1000, i + 1);
    });
    expect(average).toBeCloseTo(samples.reduce((a, b) => a + b, 0) / samples.length, 9);
  });

  it("forgets as fast in time whatever the rate: 100 samples 10 ms apart weigh like 10 samples 100 ms apart", () => {
    let fast: number | undefined = 100;
    for (let i = 0; i < 100; i++) fast = decayedAverage(fast, 10, 10, 1000, LATER);
    let slow: number | undefined = 100;
    for (let i = 0; i < 10; i++) slow = decayedAverage(slow, 10, 100, 1000, LATER);
    expect(fast).toBeCloseTo(slow as number, 9);
    expect(fast).toBeCloseTo(10 + 90 * Math.exp(-1), 9);
  });
});
