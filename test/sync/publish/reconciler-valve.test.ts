import { describe, expect, it, vi } from "vitest";
import { endpointsIn, reconcilerWorld } from "./reconciler-kit.js";

describe("reconciler", () => {
  const w = reconcilerWorld();

  it("holds a mass removal and publishes it once it has persisted for the hold time", async () => {
    w.cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]);
    w.build({ holdMs: 1_000 });
    await w.reconciler.enable();
    w.cache.setEndpoints("shop", "web", ["10.0.0.1"]);
    w.reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(100);
    expect(await endpointsIn(w.writer, "shop/web")).toHaveLength(4);
    expect(w.metrics.get("valveHolds")).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await endpointsIn(w.writer, "shop/web")).toEqual(["10.0.0.1"]);
  });

  it("drops a held removal when the endpoints come back before the hold time", async () => {
    w.cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]);
    w.build({ holdMs: 1_000 });
    await w.reconciler.enable();
    w.writer.calls.length = 0;
    w.cache.setEndpoints("shop", "web", []);
    w.reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(300);
    w.cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]);
    w.reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(2_000);
    expect(w.writer.calls).toEqual([]);
    expect(await endpointsIn(w.writer, "shop/web")).toHaveLength(4);
  });

  it("publishes the delete of a Service at once, whatever the valve", async () => {
    w.build({ holdMs: 60_000 });
    await w.reconciler.enable();
    w.cache.deleteService("shop", "web");
    w.reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(100);
    expect(await endpointsIn(w.writer, "shop/web")).toBeUndefined();
  });
});
