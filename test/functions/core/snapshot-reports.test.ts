import { describe, expect, it } from "vitest";
import { RouterMetrics } from "../../../functions/core/observability/metrics.js";
import { RouteReports } from "../../../functions/core/snapshot/snapshot-reports.js";
import { MemoryStore } from "../../../store/memory-store.js";
import type { Snapshot } from "../../../store/store.js";
import { endpoint, routeRecord, routeRule, serviceRecordV2 } from "../../e2e/support/contract-layout.js";
import { capturingLogger } from "../../support/loggers.js";

const route = routeRecord("httproute:shop/web", {
  hostnames: ["shop.test"],
  rules: [routeRule([{ service: "shop/web", port: 80, weight: 1 }])],
});
const drifted = { ...route, hostnames: ["shop.test", "old.shop.test"] };
const web = (cluster: string, ip: string) =>
  serviceRecordV2({ cluster, service: "shop/web", ports: [{ number: 80, ipv4: [endpoint(ip, 8080)] }] });

describe("reports of routes updated change by change", () => {
  it("logs a conflict once while it lasts, clears it when resolved and logs it again when it comes back", async () => {
    const { logger, lines } = capturingLogger();
    const store = new MemoryStore();
    const east = store.writer("east");
    const west = store.writer("west");
    for (const writer of [east, west])
      await writer.heartbeat({ holder: "t", leaseMs: 60_000, at: Date.now() });
    await east.putRoute(route);
    await east.putService(web("east", "10.0.0.1"));
    await west.putService(web("west", "10.1.0.1"));
    const reports = new RouteReports(logger, new RouterMetrics(), undefined);
    const routesOf = (snapshot: Snapshot) => reports.routesOf(snapshot);
    const logged = () => lines.filter((line) => String(line.msg).includes("different definitions")).length;
    routesOf(store.current());

    await west.putRoute(drifted);
    const conflicted = routesOf(store.current());
    expect(conflicted.conflictChanges?.added.map((conflict) => conflict.id)).toEqual(["httproute:shop/web"]);
    expect(conflicted.conflicts).toHaveLength(1);
    expect(logged()).toBe(1);

    await east.putService(web("east", "10.0.0.2"));
    await west.putService(web("west", "10.1.0.2"));
    const updated = routesOf(store.current());
    expect(updated.conflictChanges).toBeDefined();
    expect(updated.conflicts).toHaveLength(1);
    expect(logged()).toBe(1);

    await west.putRoute(route);
    expect(routesOf(store.current()).conflicts).toEqual([]);
    await west.putRoute(drifted);
    expect(routesOf(store.current()).conflicts).toHaveLength(1);
    expect(logged()).toBe(2);
  });
});
