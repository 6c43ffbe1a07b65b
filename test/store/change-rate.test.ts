import { describe, expect, it } from "vitest";
import { ChangeRate } from "../../store/change-rate.js";

describe("the rate a cluster's change entries are applied at", () => {
  it("lets a burst through, then holds the stream until the overdraft is paid back", () => {
    const rate = new ChangeRate(100, { burst: 500, minIntervalMs: 0 });
    expect(rate.open("evil", 0)).toBe(true);
    rate.spend("evil", 500, 0);
    expect(rate.open("evil", 0)).toBe(true);
    rate.spend("evil", 200, 0);
    expect(rate.open("evil", 0)).toBe(false);
    expect(rate.throttled("evil", 0)).toBe(true);
    expect(rate.waitMs(["evil"], 0)).toBe(2_000);
    expect(rate.open("evil", 1_999)).toBe(false);
    expect(rate.open("evil", 2_000)).toBe(true);
  });

  it("keeps each cluster's bucket apart", () => {
    const rate = new ChangeRate(10, { burst: 10, minIntervalMs: 0 });
    rate.spend("evil", 100, 0);
    expect(rate.open("evil", 0)).toBe(false);
    expect(rate.open("east", 0)).toBe(true);
    expect(rate.waitMs(["evil", "east"], 0)).toBe(0);
  });

  it("spaces one cluster's batches by the minimum interval", () => {
    const rate = new ChangeRate(100, { minIntervalMs: 100 });
    rate.spend("east", 1, 1_000);
    expect(rate.waitMs(["east"], 1_040)).toBe(60);
    expect(rate.open("east", 1_100)).toBe(true);
  });

  it("calls a cluster rested once its bucket is full again", () => {
    const rate = new ChangeRate(100, { burst: 200, minIntervalMs: 0 });
    rate.spend("evil", 300, 0);
    expect(rate.rested("evil", 2_500)).toBe(false);
    expect(rate.rested("evil", 3_000)).toBe(true);
  });

  it("holds a stream whose batches read more bytes a second than bytesPerSecond, however few its entries", () => {
    const MiB = 1024 * 1024;
    const rate = new ChangeRate(100, { minIntervalMs: 0, bytesPerSecond: 8 * MiB });
    rate.spend("evil", 12, 0);
    rate.spendBytes("evil", 12 * MiB, 0);
    expect(rate.throttled("evil", 0)).toBe(true);
    expect(rate.waitMs(["evil"], 0)).toBe(500);
    expect(rate.open("evil", 499)).toBe(false);
    expect(rate.open("evil", 500)).toBe(true);
    expect(rate.rested("evil", 1_000)).toBe(false);
    expect(rate.rested("evil", 1_500)).toBe(true);
    expect(rate.open("east", 0)).toBe(true);
  });

  it("lets bytes cost nothing without bytesPerSecond", () => {
    const rate = new ChangeRate(100, { minIntervalMs: 0 });
    rate.spendBytes("evil", 1024 ** 3, 0);
    expect(rate.open("evil", 0)).toBe(true);
  });
});
