import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Deadlines, type Expiring } from "../../lib/deadlines.js";

/** An entry that records when it expired (fake clock ms). */
function recorder(): Expiring & { readonly at: number[] } {
  const at: number[] = [];
  return { at, expire: () => at.push(Date.now()) };
}

describe("coarse deadlines", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    [0, 10],
    [1, 10],
    [95, 10],
    [100, 10],
    [250, 25],
  ])("expires an entry of %i ms once, no sooner and at most one tick (%i ms) later", (delay, tick) => {
    const deadlines = new Deadlines(tick);
    const entry = recorder();
    const start = Date.now();
    deadlines.add(entry, delay);
    vi.advanceTimersByTime(delay + 3 * tick);
    expect(entry.at).toHaveLength(1);
    const late = (entry.at[0] ?? 0) - start - delay;
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThanOrEqual(tick);
  });

  it("never expires an entry cancelled before its time, and expires the others of its bucket", () => {
    const deadlines = new Deadlines(10);
    const cancelled = recorder();
    const kept = recorder();
    const slot = deadlines.add(cancelled, 50);
    deadlines.add(kept, 50);
    deadlines.cancel(cancelled, slot);
    expect(deadlines.size).toBe(1);
    vi.advanceTimersByTime(200);
    expect(cancelled.at).toEqual([]);
    expect(kept.at).toHaveLength(1);
  });

  it("expires an entry added by another's expiry in a later sweep, never in the one running", () => {
    const deadlines = new Deadlines(10);
    const second = recorder();
    const first: Expiring = { expire: () => deadlines.add(second, 0) };
    deadlines.add(first, 20);
    vi.advanceTimersByTime(20);
    expect(second.at).toEqual([]);
    vi.advanceTimersByTime(10);
    expect(second.at).toHaveLength(1);
  });

  it("stops its timer once nothing waits for a while, cancelled entries included, and starts it again with the next", () => {
    const idle = new Deadlines(10);
    const slot = idle.add(recorder(), 60_000);
    idle.cancel(recorder(), slot);
    expect(idle.size).toBe(1);
    for (const entry of slot) idle.cancel(entry, slot);
    expect(idle.size).toBe(0);
    vi.advanceTimersByTime(2_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stops its timer once nothing waits for a while, and starts it again with the next entry", () => {
    const deadlines = new Deadlines(10);
    deadlines.add(recorder(), 10);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(2_000);
    expect(vi.getTimerCount()).toBe(0);
    const late = recorder();
    deadlines.add(late, 10);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(30);
    expect(late.at).toHaveLength(1);
  });

  it("expires every bucket whose time came when the event loop was held up past several ticks", () => {
    const deadlines = new Deadlines(10);
    const entries = [10, 20, 30, 40].map((delay) => {
      const entry = recorder();
      deadlines.add(entry, delay);
      return entry;
    });
    vi.setSystemTime(Date.now() + 100);
    vi.advanceTimersToNextTimer();
    for (const entry of entries) expect(entry.at).toHaveLength(1);
  });
});
