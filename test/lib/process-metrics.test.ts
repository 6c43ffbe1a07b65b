import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { processMetrics } from "../../lib/process-metrics.js";
import { renderFamilies } from "../../lib/prometheus.js";

/** The value of `sample` (a metric name with its labels) in one scrape; undefined when absent. */
function valueIn(text: string, sample: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

const scrape = () => renderFamilies(processMetrics().families());

describe("process metrics", () => {
  it("export the conventional process_* and nodejs_* series with the process's own figures", () => {
    const text = scrape();
    const cpu = process.cpuUsage();
    expect(valueIn(text, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(valueIn(text, "process_cpu_user_seconds_total")).toBeLessThanOrEqual(cpu.user / 1e6);
    expect(valueIn(text, "process_cpu_seconds_total")).toBeGreaterThanOrEqual(
      valueIn(text, "process_cpu_system_seconds_total") ?? Number.NaN,
    );
    expect(valueIn(text, "process_resident_memory_bytes")).toBeGreaterThan(1 << 20);
    const started = valueIn(text, "process_start_time_seconds") ?? 0;
    // The start time is as old as the process: its uptime ago, within a second.
    expect(Math.abs(Date.now() / 1000 - process.uptime() - started)).toBeLessThan(1);
    expect(valueIn(text, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    expect(valueIn(text, "nodejs_heap_size_total_bytes")).toBeGreaterThanOrEqual(
      valueIn(text, "nodejs_heap_size_used_bytes") ?? Number.NaN,
    );
    expect(valueIn(text, "nodejs_active_handles_total")).toBeGreaterThan(0);
    expect(valueIn(text, `nodejs_version_info{version="${process.version}"}`)).toBe(1);
    if (process.platform === "linux") expect(valueIn(text, "process_open_fds")).toBeGreaterThan(2);
    for (const family of ["process_cpu_seconds_total counter", "nodejs_eventloop_lag_seconds gauge"]) {
      expect(text).toContain(`# TYPE ${family}\n`);
    }
    expect(text).toContain("# TYPE nodejs_gc_duration_seconds histogram\n");
  });

  it("report the loop's delay since the previous scrape, then start over", async () => {
    scrape();
    const blockedUntil = performance.now() + 50;
    while (performance.now() < blockedUntil) {
      // Holding the event loop, as a synchronous handler would.
    }
    // Node's delay monitor records on its own timer: let it run a few turns.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const text = scrape();
    expect(valueIn(text, "nodejs_eventloop_lag_max_seconds")).toBeGreaterThan(0);
    expect(valueIn(text, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThan(0);
    expect(valueIn(text, "nodejs_eventloop_lag_seconds")).toBeGreaterThan(0);
    // The scrape above reset the histogram, and no turn of the loop ran since.
    expect(valueIn(scrape(), "nodejs_eventloop_lag_max_seconds")).toBe(0);
  });

  it("count garbage collections by kind as they happen", async () => {
    scrape();
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const majors = () => valueIn(scrape(), 'nodejs_gc_duration_seconds_count{kind="major"}') ?? 0;
    const before = majors();
    gc();
    // GC entries reach the observer asynchronously: wait for the one this test caused, bounded.
    const deadline = Date.now() + 5_000;
    while (majors() <= before && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(majors()).toBeGreaterThan(before);
  });
});
