import { describe, expect, it } from "vitest";
import { scrapeLine } from "../../bench/metrics/report.js";

const size = { clusters: 10, services: 5000, endpoints: 20 };

describe("the metrics bench's line", () => {
  it("has the issue's shape for the default setting", () => {
    expect(
      scrapeLine({
        size,
        series: "service",
        ms: 903.6,
        bytes: 20_789_276,
        maxDelayMs: 4.4,
        p99DelayMs: 1.2,
        busiestMs: 2.1,
        readyEndpoints: 1_000_000,
      }),
    ).toBe(
      "metrics scrape (10 clusters, 1000000 endpoints): 904 ms, 20789276 bytes, max event-loop delay 4 ms",
    );
  });

  it("names a METRICS_BACKENDS setting other than the default", () => {
    expect(
      scrapeLine({
        size,
        series: "cluster",
        ms: 30,
        bytes: 6606,
        maxDelayMs: 2,
        p99DelayMs: 1,
        busiestMs: 1,
        readyEndpoints: 1_000_000,
      }),
    ).toBe(
      "metrics scrape (10 clusters, 1000000 endpoints, METRICS_BACKENDS=cluster): 30 ms, 6606 bytes, max event-loop delay 2 ms",
    );
  });
});
