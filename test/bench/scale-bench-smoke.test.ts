import { describe, expect, it } from "vitest";
import { formatScaleReport } from "../../bench/scale/report.js";
import { runScaleBench } from "../../bench/scale/scale-bench.js";

describe("scale bench smoke", () => {
  it("runs the built sync and router and the Workers reader at small sizes and prints the issue's lines", async () => {
    const result = await runScaleBench(
      {
        sync: {
          smallServices: 20,
          endpointsPerSmall: 5,
          largeServices: 1,
          endpointsPerLarge: 40,
          slicesPerLarge: 4,
          changesPerSecond: 20,
          changeSeconds: 1,
        },
        routerSizes: [
          { clusters: 1, servicesPerCluster: 10 },
          { clusters: 2, servicesPerCluster: 20 },
        ],
        routerChanges: 3,
        routerChangesPerSecond: 20,
        workersSizes: [10, 40],
        workersChanges: 2,
        endpointsPerService: 5,
      },
      () => {},
    );
    // Every change reached the router-side snapshot, and each store was loaded whole.
    expect(result.sync.observed).toBe(result.sync.changes);
    expect(result.sync.endpoints).toBe(140);
    expect(result.routers.map((router) => router.endpoints)).toEqual([50, 200]);
    for (const router of result.routers) expect(router.rssBytes).toBeGreaterThan(0);
    expect(result.workers.map((reader) => reader.services)).toEqual([10, 40]);

    const report = formatScaleReport(result, 20);
    const number = "\\d+(\\.\\d+)?";
    const shapes = [
      `scale change->routed p99 \\(140 endpoints, 20 changes/s\\): ${number} ms`,
      `scale sync rss \\(140 endpoints\\): ${number} MiB`,
      `scale router rss \\(2 clusters, 200 endpoints\\): ${number} MiB`,
      `scale router cpu per change \\(10 services\\): -?${number} us`,
      `scale router cpu per change \\(40 services\\): -?${number} us`,
      `scale workers cpu per change \\(10 services\\): ${number} ms`,
      `scale workers cpu per change \\(40 services\\): ${number} ms`,
      `scale workers isolate heap \\(40 services\\): -?${number} MiB`,
    ];
    for (const shape of shapes) expect(report).toMatch(new RegExp(`^${shape}$`, "m"));
    expect(report).toMatch(/^change->routed p99 .* (met|missed)$/m);
    expect(report).toMatch(/^Memory per endpoint .*: router RSS -?\d+ B, Workers heap -?\d+ B\.$/m);
  }, 120_000);
});
