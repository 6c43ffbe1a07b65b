import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../lib/logger.js";
import { MemoryStore } from "../../../store/memory-store.js";
import { createSyncMetrics } from "../../../sync/metrics.js";
import { Reconciler } from "../../../sync/publish/reconciler.js";
import { SafetyValve } from "../../../sync/publish/safety-valve.js";
import { endpointsIn, PlainCache, reconcilerWorld, recordingWriter } from "./reconciler-kit.js";

describe("reconciler", () => {
  const w = reconcilerWorld();

  it("publishes nothing before it is enabled", async () => {
    w.build();
    w.reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(5_000);
    expect(w.writer.calls).toEqual([]);
  });

  it("on enable loads the store and publishes exposed Services only", async () => {
    w.build();
    await w.reconciler.enable();
    // The service record first, then the annotation route that needs it.
    expect(w.writer.calls).toEqual(["load", "put shop/web", "put route annotation:shop/web"]);
    expect(await endpointsIn(w.writer, "shop/web")).toEqual(["10.0.0.1", "10.0.0.2"]);
    expect(await endpointsIn(w.writer, "shop/internal")).toBeUndefined();
  });

  it("coalesces a burst of events into one write after the quiet period", async () => {
    w.build();
    await w.reconciler.enable();
    w.writer.calls.length = 0;
    for (let i = 3; i < 13; i++) {
      w.cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", `10.0.0.${i}`]);
      w.reconciler.markDirty("shop", "web");
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(w.writer.calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(50);
    expect(w.writer.calls).toEqual(["put shop/web"]);
    expect(await endpointsIn(w.writer, "shop/web")).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.12"]);
  });

  it("still flushes a constant stream of events once max-wait has passed", async () => {
    w.build();
    await w.reconciler.enable();
    w.writer.calls.length = 0;
    for (let i = 0; i < 20; i++) {
      w.reconciler.markDirty("shop", "web");
      w.cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", `10.0.0.${100 + i}`]);
      await vi.advanceTimersByTimeAsync(30);
    }
    // 600 ms of events 30 ms apart never leave a 50 ms quiet period; max-wait (500 ms) forces one write.
    expect(w.writer.calls).toEqual(["put shop/web"]);
  });

  it("skips a write when the recomputed record equals the stored one", async () => {
    w.build();
    await w.reconciler.enable();
    w.writer.calls.length = 0;
    w.reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(100);
    expect(w.writer.calls).toEqual([]);
    expect(w.metrics.get("skippedUnchanged")).toBe(1);
  });

  it("removes the record when the Service is deleted", async () => {
    w.build();
    await w.reconciler.enable();
    w.cache.deleteService("shop", "web");
    w.serviceChanged("shop", "web");
    await vi.advanceTimersByTimeAsync(100);
    // The route goes first, then the record it needed.
    expect(w.writer.calls.slice(-2)).toEqual(["remove route annotation:shop/web", "remove shop/web"]);
    expect(await endpointsIn(w.writer, "shop/web")).toBeUndefined();
  });

  it("removes the record when the Service is no longer exposed", async () => {
    w.build();
    await w.reconciler.enable();
    w.cache.setService("shop", "web", undefined);
    w.serviceChanged("shop", "web");
    await vi.advanceTimersByTimeAsync(100);
    expect(w.writer.calls.at(-1)).toBe("remove shop/web");
    expect(await w.writer.loadAll()).toEqual({ services: new Map(), routes: new Map() });
  });

  it("keeps the last good record when annotations turn malformed, and still updates other Services", async () => {
    w.cache.setService("shop", "api", "api.example.com");
    w.cache.setEndpoints("shop", "api", ["10.0.2.1"]);
    w.build();
    await w.reconciler.enable();
    w.cache.setService("shop", "web", "web.example.com,!oops");
    w.cache.setEndpoints("shop", "api", ["10.0.2.1", "10.0.2.2"]);
    w.serviceChanged("shop", "web");
    w.reconciler.markDirty("shop", "api");
    await vi.advanceTimersByTimeAsync(100);
    expect(await endpointsIn(w.writer, "shop/web")).toEqual(["10.0.0.1", "10.0.0.2"]);
    expect(await endpointsIn(w.writer, "shop/api")).toEqual(["10.0.2.1", "10.0.2.2"]);
    expect(w.metrics.get("invalidServices")).toBe(1);
  });

  it("stops writing once disabled and reloads the store when enabled again", async () => {
    w.build();
    await w.reconciler.enable();
    await w.reconciler.disable();
    w.writer.calls.length = 0;
    w.cache.setEndpoints("shop", "web", ["10.0.0.9"]);
    w.reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(w.writer.calls).toEqual([]);
    await w.reconciler.enable();
    expect(w.writer.calls).toEqual(["load", "put shop/web"]);
  });

  it("flush publishes pending changes without waiting for the debounce", async () => {
    w.build();
    await w.reconciler.enable();
    w.cache.setEndpoints("shop", "web", ["10.0.0.7"]);
    w.reconciler.markDirty("shop", "web");
    await w.reconciler.flush();
    expect(await endpointsIn(w.writer, "shop/web")).toEqual(["10.0.0.7"]);
  });
});

describe("reconciler write ordering", () => {
  it("never runs two store writes at once", async () => {
    const cache = new PlainCache();
    for (let i = 0; i < 20; i++) {
      cache.setService("shop", `s${i}`, `s${i}.example.com`);
      cache.setEndpoints("shop", `s${i}`, ["10.0.0.1"]);
    }
    const writer = recordingWriter(new MemoryStore().writer("east"), 2);
    const reconciler = new Reconciler({
      cache,
      writer,
      cluster: "east",
      valve: new SafetyValve(),
      logger: silentLogger,
      metrics: createSyncMetrics(),
      debounceMs: 5,
    });
    const enabling = reconciler.enable();
    for (let i = 0; i < 20; i++) {
      cache.setEndpoints("shop", `s${i}`, ["10.0.0.2"]);
      reconciler.markDirty("shop", `s${i}`);
    }
    await enabling;
    await reconciler.flush();
    await reconciler.fullResync();
    await reconciler.stop();
    expect(writer.maxConcurrent).toBe(1);
    const stored = await writer.load();
    expect(stored.size).toBe(20);
    for (const raw of stored.values()) expect(raw).toContain("10.0.0.2");
  });
});
