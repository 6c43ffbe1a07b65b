import { describe, expect, it } from "vitest";
import { heldByAnother, type LeaseView, microTime, observeLease } from "../../../sync/kube/lease-record.js";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

describe("lease expiry rule", () => {
  const lease = (holderIdentity: string | undefined, renewTimeMs: number | undefined): LeaseView => ({
    holderIdentity,
    renewTimeMs,
    leaseDurationSeconds: 10,
  });

  it.each<[string, LeaseView, number, boolean]>([
    ["no holder", lease(undefined, NOW), NOW, false],
    ["held by me", lease("me", NOW), NOW - 60_000, false],
    ["held by another, record seen changing 9 s ago", lease("b", NOW - 9_000), NOW - 9_000, true],
    ["held by another, record unchanged for 10 s", lease("b", NOW - 9_000), NOW - 10_000, false],
    // renewTime is the holder's clock: an hour behind ours says nothing about whether it still renews.
    ["held by another, renewTime an hour old but just seen changing", lease("b", NOW - 3_600_000), NOW, true],
    [
      "held by another, renewTime in our future but unchanged for 10 s",
      lease("b", NOW + 3_600_000),
      NOW - 10_000,
      false,
    ],
    ["held by another, no renewTime, just seen", lease("b", undefined), NOW, true],
  ])("%s → held by another: %s", (_label, view, observedSinceMs, expected) => {
    expect(heldByAnother(view, "me", observedSinceMs, NOW)).toBe(expected);
  });

  it("restarts the observation clock only when the Lease record changes", () => {
    const first = observeLease(undefined, lease("b", NOW - 5_000), NOW);
    expect(first.sinceMs).toBe(NOW);
    expect(observeLease(first, lease("b", NOW - 5_000), NOW + 4_000)).toBe(first);
    expect(observeLease(first, lease("b", NOW - 1_000), NOW + 4_000).sinceMs).toBe(NOW + 4_000);
    expect(observeLease(first, lease("c", NOW - 5_000), NOW + 4_000).sinceMs).toBe(NOW + 4_000);
  });

  it("writes Lease times as MicroTime with six fractional digits", () => {
    expect(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678))).toBe("2026-01-02T03:04:05.678000Z");
  });
});
