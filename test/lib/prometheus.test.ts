import { describe, expect, it } from "vitest";
import {
  CounterFamily,
  HistogramFamily,
  labelText,
  type MetricFamily,
  renderFamilies,
} from "../../lib/prometheus.js";

describe("renderFamilies", () => {
  it("writes HELP, TYPE and one line per sample, escaping label values and help text", () => {
    const family: MetricFamily = {
      name: "x_total",
      type: "counter",
      help: 'a "help" \\ line\nsecond',
      samples: [{ labels: { path: 'a"b\\c\nd' }, value: 3 }, { value: Number.POSITIVE_INFINITY }],
    };
    expect(renderFamilies([family])).toBe(
      [
        '# HELP x_total a "help" \\\\ line\\nsecond',
        "# TYPE x_total counter",
        'x_total{path="a\\"b\\\\c\\nd"} 3',
        "x_total +Inf",
        "",
      ].join("\n"),
    );
  });

  it("uses a sample's pre-rendered label text instead of its labels", () => {
    const text = renderFamilies([
      {
        name: "g",
        type: "gauge",
        help: "h",
        samples: [{ labelText: '{a="1"}', labels: { b: "2" }, value: 1 }],
      },
    ]);
    expect(text).toContain('g{a="1"} 1');
  });

  it.each([
    ["no labels", undefined, ""],
    ["an empty label set", {}, ""],
    ["labels in insertion order", { b: "2", a: "1" }, '{b="2",a="1"}'],
  ])("labelText of %s", (_name, labels, expected) => {
    expect(labelText(labels)).toBe(expected);
  });
});

describe("CounterFamily", () => {
  it("hands out one child per label values and renders each with its labels", () => {
    const family = new CounterFamily("hits_total", "Hits.", ["service", "outcome"]);
    const ok = family.child("demo/web", "ok");
    ok.inc();
    ok.value += 2;
    family.child("demo/web", "reset").inc();
    expect(family.child("demo/web", "ok")).toBe(ok);
    expect(renderFamilies([family.family()])).toBe(
      [
        "# HELP hits_total Hits.",
        "# TYPE hits_total counter",
        'hits_total{service="demo/web",outcome="ok"} 3',
        'hits_total{service="demo/web",outcome="reset"} 1',
        "",
      ].join("\n"),
    );
  });

  it("keeps label values apart that would run together when joined", () => {
    const family = new CounterFamily("c", "h", ["a", "b"]);
    expect(family.child("ab", "")).not.toBe(family.child("a", "b"));
  });

  it("refuses a wrong number of label values", () => {
    expect(() => new CounterFamily("c", "h", ["a", "b"]).child("x")).toThrow(/takes 2 label values/);
  });

  it("renders as a gauge when asked", () => {
    expect(new CounterFamily("g", "h", [], "gauge").family().type).toBe("gauge");
  });
});

describe("HistogramFamily", () => {
  it("renders cumulative buckets with le last, +Inf, _sum and _count", () => {
    const family = new HistogramFamily("d_seconds", "Durations.", ["service"], [0.1, 1]);
    const child = family.child("demo/api");
    for (const value of [0.05, 0.1, 0.5, 2]) child.observe(value);
    expect(renderFamilies([family.family()])).toBe(
      [
        "# HELP d_seconds Durations.",
        "# TYPE d_seconds histogram",
        'd_seconds_bucket{service="demo/api",le="0.1"} 2',
        'd_seconds_bucket{service="demo/api",le="1"} 3',
        'd_seconds_bucket{service="demo/api",le="+Inf"} 4',
        'd_seconds_sum{service="demo/api"} 2.65',
        'd_seconds_count{service="demo/api"} 4',
        "",
      ].join("\n"),
    );
    expect(child.count()).toBe(4);
  });

  it("renders an unlabelled histogram with le alone", () => {
    const family = new HistogramFamily("u", "h", [], [1]);
    family.child().observe(3);
    const text = renderFamilies([family.family()]);
    expect(text).toContain('u_bucket{le="1"} 0');
    expect(text).toContain('u_bucket{le="+Inf"} 1');
    expect(text).toContain("u_sum 3\nu_count 1");
  });

  it("counts a value equal to a bound in that bound's bucket (le is inclusive)", () => {
    const child = new HistogramFamily("h", "h", [], [0.5, 1]).child();
    child.observe(0.5);
    expect([...child.counts]).toEqual([1, 0, 0]);
  });

  it.each([
    ["unsorted buckets", [1, 0.5]],
    ["repeated buckets", [1, 1]],
    ["an infinite bucket", [1, Number.POSITIVE_INFINITY]],
  ])("refuses %s", (_name, buckets) => {
    expect(() => new HistogramFamily("h", "h", [], buckets)).toThrow(/strictly increasing/);
  });

  it("refuses le as a label name", () => {
    expect(() => new HistogramFamily("h", "h", ["le"], [1])).toThrow(/bucket label/);
  });
});
