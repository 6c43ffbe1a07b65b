import { describe, expect, it } from "vitest";
import { PassiveEjection } from "../../../functions/core/selection/ejection.js";

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const options = { consecutiveFailures: 3, baseMs: 1_000, maxMs: 5_000, maxEjectedFraction: 0.5 };

describe("PassiveEjection", () => {
  it.each([
    [2, false],
    [3, true],
  ])("after %i consecutive failures the backend is ejected: %s", (failures, ejected) => {
    const time = clock();
    const ejection = new PassiveEjection(time.now, options);
    for (let i = 0; i < failures; i++) ejection.recordFailure("a");
    expect(ejection.isEjected("a")).toBe(ejected);
  });

  it("a success resets the failure count", () => {
    const ejection = new PassiveEjection(clock().now, options);
    ejection.recordFailure("a");
    ejection.recordFailure("a");
    ejection.recordSuccess("a");
    ejection.recordFailure("a");
    expect(ejection.isEjected("a")).toBe(false);
  });

  it("doubles the ejection time on each repeat, up to the cap, and lets the backend back in after it", () => {
    const time = clock();
    const ejection = new PassiveEjection(time.now, options);
    const durations: number[] = [];
    for (let round = 0; round < 5; round++) {
      let event: ReturnType<PassiveEjection["recordFailure"]>;
      for (let i = 0; i < 3; i++) event = ejection.recordFailure("a");
      durations.push(event?.durationMs ?? -1);
      time.advance((event?.durationMs ?? 0) - 1);
      expect(ejection.isEjected("a")).toBe(true);
      time.advance(1);
      expect(ejection.isEjected("a")).toBe(false);
    }
    expect(durations).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
  });

  it("failures while ejected do not extend the ejection", () => {
    const time = clock();
    const ejection = new PassiveEjection(time.now, options);
    for (let i = 0; i < 3; i++) ejection.recordFailure("a");
    expect(ejection.recordFailure("a")).toBeUndefined();
    time.advance(1_000);
    expect(ejection.isEjected("a")).toBe(false);
  });

  it.each([
    [1, 1, 0],
    [2, 2, 1],
    [4, 4, 2],
    [5, 1, 1],
  ])("of %i backends with %i ejected, %i stay out (cap 50%%)", (size, ejectedCount, excludedCount) => {
    const time = clock();
    const ejection = new PassiveEjection(time.now, options);
    const addresses = Array.from({ length: size }, (_, i) => `10.0.0.${i}:80`);
    for (const address of addresses.slice(0, ejectedCount)) {
      for (let i = 0; i < 3; i++) ejection.recordFailure(address);
      time.advance(1);
    }
    expect(ejection.excluded(addresses).size).toBe(excludedCount);
  });

  it("keeps the most recently ejected out when the cap lets some back", () => {
    const time = clock();
    const ejection = new PassiveEjection(time.now, options);
    for (const address of ["old", "new"]) {
      for (let i = 0; i < 3; i++) ejection.recordFailure(address);
      time.advance(10);
    }
    expect([...ejection.excluded(["old", "new"])]).toEqual(["new"]);
  });
});
