import { afterEach, describe, expect, it, vi } from "vitest";
import { PeriodicRead } from "../../lib/periodic-read.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("PeriodicRead", () => {
  it("joins a refresh asked while a read runs, and reads again once it ended", async () => {
    let reads = 0;
    let release = () => {};
    const reader = new PeriodicRead(async () => {
      reads++;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    }, 60_000);
    const first = reader.refresh();
    const joined = reader.refresh();
    expect(joined).toBe(first);
    release();
    await first;
    const next = reader.refresh();
    release();
    await next;
    expect(reads).toBe(2);
  });

  it("reads first once `after` settles, then on every interval until closed", async () => {
    vi.useFakeTimers();
    let reads = 0;
    const reader = new PeriodicRead(async () => {
      reads++;
    }, 1_000);
    let load = () => {};
    reader.start(
      new Promise<void>((resolve) => {
        load = resolve;
      }),
    );
    await vi.advanceTimersByTimeAsync(500);
    expect(reads).toBe(0);
    load();
    await vi.advanceTimersByTimeAsync(0);
    expect(reads).toBe(1);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(reads).toBe(3);
    reader.close();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(reads).toBe(3);
  });

  it("still reads when `after` fails (a store that never loaded)", async () => {
    let read = () => {};
    const first = new Promise<void>((resolve) => {
      read = resolve;
    });
    const reader = new PeriodicRead(async () => read(), 60_000);
    reader.start(Promise.reject(new Error("redis down")));
    await first;
    reader.close();
  });
});
