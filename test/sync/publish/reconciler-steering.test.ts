import { describe, expect, it, vi } from "vitest";
import { decodeStoredService } from "../../../store/stored-records.js";
import { capturingLogger } from "../../support/loggers.js";
import { reconcilerWorld } from "./reconciler-kit.js";

describe("reconciler: steering annotations", () => {
  const w = reconcilerWorld();

  it("publishes the Service's steering, and a malformed annotation once as a warning while the endpoints keep going out", async () => {
    const { logger, lines } = capturingLogger();
    w.cache.setService("shop", "web", "web.example.com", {
      "edgeslice.io/cluster-weights": "east=90,west=10",
    });
    w.build({ logger });
    await w.reconciler.enable();
    const stored = async () =>
      decodeStoredService("east", "shop/web", (await w.writer.load()).get("shop/web") ?? "");
    expect((await stored())?.record.steering).toEqual({
      policy: "weighted",
      weights: [
        { cluster: "east", weight: 90 },
        { cluster: "west", weight: 10 },
      ],
    });

    w.cache.setService("shop", "web", "web.example.com", { "edgeslice.io/cluster-weights": "east=ninety" });
    for (let i = 0; i < 3; i++) {
      w.cache.setEndpoints("shop", "web", ["10.0.0.1", "10.0.0.2", `10.0.0.${10 + i}`]);
      w.serviceChanged("shop", "web");
      await vi.advanceTimersByTimeAsync(200);
    }
    const record = (await stored())?.record;
    expect(record?.steering).toBeUndefined();
    expect(record?.ports[0]?.ipv4.endpoints.map((e) => e.ip)).toContain("10.0.0.12");
    const warned = lines.filter((line) => line.msg === "steering annotation ignored: it does not parse");
    expect(warned).toHaveLength(1);
    expect(warned[0]?.reason).toContain("edgeslice.io/cluster-weights");
  });
});
