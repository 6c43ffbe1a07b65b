import { describe, expect, it, vi } from "vitest";
import { recordingLogger } from "../../support/loggers.js";
import { endpointsIn, expose, reconcilerWorld } from "./reconciler-kit.js";

describe("reconciler", () => {
  const w = reconcilerWorld();

  it("full resync removes leftovers of a previous run and re-pushes what the store lost", async () => {
    const leftover = w.store.writer("east");
    const stale = expose(
      "east",
      {
        metadata: {
          name: "gone",
          namespace: "shop",
          annotations: { "edgeslice.io/hosts": "gone.example.com" },
        },
      },
      [],
    );
    if (stale.kind !== "exposed") throw new Error("fixture must expose");
    await leftover.put(stale.record);
    w.build();
    await w.reconciler.enable();
    expect(await endpointsIn(w.writer, "shop/gone")).toBeUndefined();
    expect(w.writer.calls).toContain("remove shop/gone");

    // The store restarts empty: a full resync puts everything back.
    await leftover.remove("shop/web");
    w.writer.calls.length = 0;
    await w.reconciler.fullResync();
    expect(w.writer.calls).toEqual(["load", "put shop/web"]);
    expect(await endpointsIn(w.writer, "shop/web")).toEqual(["10.0.0.1", "10.0.0.2"]);
  });

  it("keeps a Service dirty after a failed write and retries with growing backoff", async () => {
    w.build();
    await w.reconciler.enable();
    w.writer.calls.length = 0;
    w.writer.failNext = 3;
    w.cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    w.reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(60); // first attempt fails
    expect(w.metrics.get("writeErrors")).toBe(1);
    expect(w.reconciler.pending).toBe(1);
    await vi.advanceTimersByTimeAsync(100); // second attempt (after 100 ms) fails
    expect(w.metrics.get("writeErrors")).toBe(2);
    await vi.advanceTimersByTimeAsync(150); // third waits 200 ms: not yet
    expect(w.metrics.get("writeErrors")).toBe(2);
    await vi.advanceTimersByTimeAsync(50);
    expect(w.metrics.get("writeErrors")).toBe(3);
    await vi.advanceTimersByTimeAsync(400);
    expect(w.writer.calls).toEqual(["put shop/web"]);
    expect(w.reconciler.pending).toBe(0);
  });

  it("says a failing store once per outage at warn, each retry at debug, and when writes resume", async () => {
    const { logger, entries } = recordingLogger();
    w.build({ logger });
    await w.reconciler.enable();
    w.writer.failNext = 3;
    w.cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.4"]);
    w.reconciler.markDirty("shop", "web");
    await vi.advanceTimersByTimeAsync(1_000);

    const said = entries
      .filter((entry) => entry.message.startsWith("store write"))
      .map((entry) => [entry.level, entry.message]);
    expect(said).toEqual([
      ["warn", "store write failed; retrying"],
      ["debug", "store write failed again; retrying"],
      ["debug", "store write failed again; retrying"],
      ["info", "store writes resumed"],
    ]);
    expect(w.reconciler.pending).toBe(0);
  });

  it("counts every Service of the cache as unpublished while the store was never read", async () => {
    w.build();
    w.writer.failNext = 100;
    await w.reconciler.enable().catch(() => {});

    expect(w.reconciler.unpublished).toEqual({ services: w.cache.services().length, routes: true });
    expect(w.cache.services().length).toBeGreaterThan(1);
    await w.reconciler.stop();
  });

  it("resolves a full resync only once a pass that failed has been retried to the end", async () => {
    w.cache.setService("shop", "api", "api.example.com");
    w.cache.setEndpoints("shop", "api", ["10.0.2.1"]);
    w.build();
    await w.reconciler.enable();
    // The store lost everything; the next two store calls fail (the load, then the load again).
    const inner = w.store.writer("east");
    await inner.remove("shop/web");
    await inner.remove("shop/api");
    w.writer.failNext = 2;
    let done = false;
    const resync = w.reconciler.fullResync().then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect([done, w.metrics.get("writeErrors")]).toEqual([false, 1]);
    await vi.advanceTimersByTimeAsync(100);
    expect([done, w.metrics.get("writeErrors")]).toEqual([false, 2]);
    await vi.advanceTimersByTimeAsync(200);
    await resync;
    expect(done).toBe(true);
    expect(await endpointsIn(inner, "shop/web")).toEqual(["10.0.0.1", "10.0.0.2"]);
    expect(await endpointsIn(inner, "shop/api")).toEqual(["10.0.2.1"]);
  });

  it("stops waiting for a failing full resync when publishing is disabled", async () => {
    w.build();
    await w.reconciler.enable();
    w.writer.failNext = 1_000;
    let done = false;
    const resync = w.reconciler.fullResync().then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(done).toBe(false);
    await w.reconciler.disable();
    await resync;
    expect(done).toBe(true);
  });
});
