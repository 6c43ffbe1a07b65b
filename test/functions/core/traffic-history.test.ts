import { describe, expect, it } from "vitest";
import {
  DURATION_BUCKETS,
  type ServiceTotals,
} from "../../../functions/core/observability/request-metrics.js";
import {
  bucketQuantile,
  OTHER_SERIES,
  ROUTER_SERIES,
  TrafficHistory,
  UNROUTED_SERIES,
} from "../../../functions/core/selection/traffic-history.js";

/** Durations with `count` responses in bucket `index` (DURATION_BUCKETS, plus one above the last bound). */
function durations(...placed: [index: number, count: number][]): number[] {
  const counts = new Array<number>(DURATION_BUCKETS.length + 1).fill(0);
  for (const [index, count] of placed) counts[index] = count;
  return counts;
}

function totals(service: string, cluster: string, counts: Partial<ServiceTotals>): ServiceTotals {
  return { service, cluster, requests: 0, clientErrors: 0, errors: 0, durations: durations(), ...counts };
}

describe("bucketQuantile", () => {
  it.each([
    { q: 0.5, counts: durations(), expected: null },
    // 10 responses in (5 ms, 10 ms]: the median is half-way through the bucket.
    { q: 0.5, counts: durations([3, 10]), expected: 0.0075 },
    { q: 0.99, counts: durations([0, 99], [6, 1]), expected: 0.001 },
    { q: 1, counts: durations([0, 99], [6, 1]), expected: 0.1 },
    // Above the last bound: the last bound is all the histogram says.
    { q: 0.99, counts: durations([14, 5]), expected: 30 },
  ])("the $q-quantile of $counts is $expected", ({ q, counts, expected }) => {
    const value = bucketQuantile(q, counts);
    if (expected === null) expect(value).toBeNull();
    else expect(value).toBeCloseTo(expected, 9);
  });
});

describe("TrafficHistory", () => {
  it("takes no sample closer than its interval to the last one", () => {
    const history = new TrafficHistory({ intervalMs: 5_000 });
    expect(history.record(0, [], 0)).toBe(true);
    expect(history.record(4_999, [], 0)).toBe(false);
    expect(history.record(5_000, [], 0)).toBe(true);
  });

  it("draws rate, 4xx and 5xx ratios and latency per service and per cluster from what each interval counted", () => {
    const history = new TrafficHistory({ intervalMs: 1_000 });
    history.record(0, [totals("shop/web", "east", { requests: 5, durations: durations([3, 5]) })], 1);
    history.record(
      2_000,
      [
        totals("shop/web", "east", {
          requests: 25,
          clientErrors: 4,
          errors: 2,
          durations: durations([3, 25]),
        }),
        totals("", "", { requests: 10, clientErrors: 10, durations: durations([0, 10]) }),
      ],
      7,
    );
    const view = history.view();

    expect(view.services.map((s) => s.name)).toEqual([UNROUTED_SERIES, "shop/web"]);
    expect(view.clusters.map((s) => s.name)).toEqual([ROUTER_SERIES, "east"]);
    const web = view.services.find((s) => s.name === "shop/web")?.points;
    expect(web).toEqual([
      {
        at: 2_000,
        rate: 10,
        clientErrorRatio: 0.2,
        serverErrorRatio: 0.1,
        p50: 0.0075,
        p99: expect.any(Number),
      },
    ]);
    expect(view.clusters.find((s) => s.name === ROUTER_SERIES)?.points[0]).toMatchObject({
      rate: 5,
      clientErrorRatio: 1,
      serverErrorRatio: 0,
    });
    expect(view.retries).toEqual([{ at: 2_000, perSecond: 3 }]);
  });

  it("keeps its last samples only, and sums services past the busiest into one line", () => {
    const history = new TrafficHistory({ intervalMs: 1, capacity: 3, maxServices: 1 });
    for (let at = 0; at < 5; at++) {
      history.record(
        at * 1_000,
        [
          totals("a/busy", "east", { requests: at * 10 }),
          totals("b/quiet", "east", { requests: at }),
          totals("c/quiet", "east", { requests: at }),
        ],
        0,
      );
    }
    const view = history.view();
    expect(view.services.map((s) => s.name)).toEqual([OTHER_SERIES, "a/busy"]);
    expect(view.services.find((s) => s.name === OTHER_SERIES)?.points.map((p) => [p.at, p.rate])).toEqual([
      [3_000, 2],
      [4_000, 2],
    ]);
  });

  it("has no point before its second sample", () => {
    const history = new TrafficHistory();
    history.record(0, [totals("a/web", "east", { requests: 3 })], 0);
    expect(history.view()).toMatchObject({ services: [], clusters: [], retries: [] });
  });
});
