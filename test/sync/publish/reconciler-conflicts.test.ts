import { describe, expect, it, vi } from "vitest";
import { capturingLogger } from "../../support/loggers.js";
import { reconcilerWorld } from "./reconciler-kit.js";

describe("reconciler: host ownership", () => {
  const w = reconcilerWorld();

  it("logs a host two Services claim once while it lasts, exports the count, and says when it is resolved", async () => {
    const { logger, lines } = capturingLogger();
    w.cache.setService("aaa", "evil", "web.example.com");
    w.cache.setEndpoints("aaa", "evil", ["10.9.0.1"]);
    w.build({ logger });
    await w.reconciler.enable();
    const conflictLines = () => lines.filter((line) => String(line.msg).startsWith("two routes claim"));
    expect(conflictLines()).toHaveLength(1);
    expect(conflictLines()[0]).toMatchObject({
      level: "warn",
      host: "web.example.com",
      winner: "annotation:aaa/evil",
      loser: "annotation:shop/web",
    });
    expect(w.metrics.render()).toMatch(/^edgeslice_sync_route_conflicts(\{[^}]*\})? 1$/m);

    // Another pass with the conflict unchanged says nothing new.
    w.serviceChanged("shop", "web");
    w.cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(conflictLines()).toHaveLength(1);

    w.cache.deleteService("aaa", "evil");
    w.serviceChanged("aaa", "evil");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(lines.filter((line) => line.msg === "route conflict resolved")).toHaveLength(1);
    expect(w.metrics.render()).toMatch(/^edgeslice_sync_route_conflicts(\{[^}]*\})? 0$/m);
  });
});
