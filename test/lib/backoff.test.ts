import { describe, expect, it } from "vitest";
import { createBackoff, exponentialDelay, jitteredDelay } from "../../lib/backoff.js";

describe("restart backoff (capped exponential, full jitter)", () => {
  const policy = { initialMs: 100, maxMs: 1_000 };
  it.each([
    [0, 0.5, 50],
    [1, 0.5, 100],
    [3, 0.5, 400],
    [4, 0.999, 999],
    [40, 0.5, 500],
    [2, 0, 0],
  ])("attempt %i with random %d waits %i ms", (attempt, random, expected) => {
    expect(jitteredDelay(attempt, policy, () => random)).toBe(expected);
  });

  it("grows with each failure and starts over after reset", () => {
    const backoff = createBackoff(policy, () => 0.99);
    const delays = [backoff.next(), backoff.next(), backoff.next()];
    expect(delays[0]).toBeLessThan(delays[1] ?? 0);
    expect(delays[1]).toBeLessThan(delays[2] ?? 0);
    backoff.reset();
    expect(backoff.next()).toBe(delays[0]);
  });
});

describe("exponential delay (no jitter)", () => {
  const policy = { initialMs: 50, maxMs: 2_000 };
  it.each([
    [0, 50],
    [1, 100],
    [5, 1_600],
    [6, 2_000],
    [2_000, 2_000],
    [-3, 50],
  ])("attempt %i waits %i ms", (attempt, expected) => {
    expect(exponentialDelay(attempt, policy)).toBe(expected);
  });
});
