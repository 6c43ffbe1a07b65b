import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DeadlineEntry, Deadlines } from "../../lib/deadlines.js";

/** An entry that records when it expired (fake clock ms). */
class Recorder extends DeadlineEntry {
  readonly at: number[] = [];
  expire(): void {
    this.at.push(Date.now());
  }
}
const recorder = () => new Recorder();

/** An entry that runs `then` when it expires. */
class Then extends DeadlineEntry {
  constructor(readonly run: () => void) {
    super();
  }
  expire(): void {
    this.run();
  }
}

describe("coarse deadlines (on the fake clock; the router's default clock is monotonic)", () => {
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
    const deadlines = new Deadlines(tick, Date.now);
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
    const deadlines = new Deadlines(10, Date.now);
    const cancelled = recorder();
    const kept = recorder();
    deadlines.add(cancelled, 50);
    deadlines.add(kept, 50);
    deadlines.cancel(cancelled);
    expect(deadlines.size).toBe(1);
    vi.advanceTimersByTime(200);
    expect(cancelled.at).toEqual([]);
    expect(kept.at).toHaveLength(1);
  });

  it("expires an entry added by another's expiry in a later sweep, never in the one running", () => {
    const deadlines = new Deadlines(10, Date.now);
    const second = recorder();
    const first = new Then(() => deadlines.add(second, 0));
    deadlines.add(first, 20);
    vi.advanceTimersByTime(20);
    expect(second.at).toEqual([]);
    vi.advanceTimersByTime(10);
    expect(second.at).toHaveLength(1);
  });

  it("stops its timer once nothing waits for a while, cancelled entries included, and starts it again with the next", () => {
    const idle = new Deadlines(10, Date.now);
    const waiting = recorder();
    idle.add(waiting, 60_000);
    idle.cancel(recorder());
    expect(idle.size).toBe(1);
    idle.cancel(waiting);
    idle.cancel(waiting);
    expect(idle.size).toBe(0);
    vi.advanceTimersByTime(2_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stops its timer once nothing waits for a while, and starts it again with the next entry", () => {
    const deadlines = new Deadlines(10, Date.now);
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
    const deadlines = new Deadlines(10, Date.now);
    const entries = [10, 20, 30, 40].map((delay) => {
      const entry = recorder();
      deadlines.add(entry, delay);
      return entry;
    });
    vi.setSystemTime(Date.now() + 100);
    vi.advanceTimersToNextTimer();
    for (const entry of entries) expect(entry.at).toHaveLength(1);
  });

  it("moves an entry added again to its new deadline instead of keeping two", () => {
    const deadlines = new Deadlines(10, Date.now);
    const entry = recorder();
    const start = Date.now();
    deadlines.add(entry, 20);
    deadlines.add(entry, 100);
    expect(deadlines.size).toBe(1);
    vi.advanceTimersByTime(200);
    expect(entry.at).toHaveLength(1);
    expect((entry.at[0] ?? 0) - start).toBeGreaterThanOrEqual(100);
  });

  it("expires the entries of one bucket in the order they were added, the middle one cancelled", () => {
    const deadlines = new Deadlines(10, Date.now);
    const order: string[] = [];
    const [a, b, c] = ["a", "b", "c"].map((name) => new Then(() => order.push(name)));
    for (const entry of [a, b, c]) if (entry) deadlines.add(entry, 30);
    if (b) deadlines.cancel(b);
    vi.advanceTimersByTime(50);
    expect(order).toEqual(["a", "c"]);
  });

  it("keeps time on a monotonic clock by default: a wall clock stepped back holds no deadline", async () => {
    vi.useRealTimers();
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const deadlines = new Deadlines(5);
      let expired = false;
      deadlines.add(new Then(() => (expired = true)), 20);
      vi.setSystemTime(Date.now() - 3_600_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(expired).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
