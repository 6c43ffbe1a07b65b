import { readdirSync } from "node:fs";
import {
  constants,
  type IntervalHistogram,
  monitorEventLoopDelay,
  PerformanceObserver,
} from "node:perf_hooks";
import { HistogramFamily, type MetricFamily, type Sample } from "./prometheus.js";

/**
 * The conventional `process_*` and `nodejs_*` series (the names Prometheus' client libraries use), read from
 * Node at scrape time. Nothing runs per request: the event-loop delay is sampled by Node's own timer
 * (perf_hooks.monitorEventLoopDelay, every 10 ms) and GC pauses come from a PerformanceObserver, both started
 * by the first scrape. The loop delay and its percentiles cover the time since the previous scrape (the
 * histogram is reset by each), as prom-client's do.
 */
export interface ProcessMetrics {
  families(): MetricFamily[];
}

/** Seconds; as prom-client's GC buckets. */
const GC_BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5];

const GC_KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb",
};

let shared: ProcessMetrics | undefined;

/** The one instance of this process: the monitors are process-wide, so every registry shares them. */
export function processMetrics(): ProcessMetrics {
  shared ??= createProcessMetrics();
  return shared;
}

function createProcessMetrics(): ProcessMetrics {
  const startTimeSeconds = Math.round((Date.now() / 1000 - process.uptime()) * 1000) / 1000;
  let loop: IntervalHistogram | undefined;
  const gc = new HistogramFamily(
    "nodejs_gc_duration_seconds",
    "Garbage collection pauses by kind (minor, major, incremental, weakcb).",
    ["kind"],
    GC_BUCKETS,
  );
  const start = () => {
    loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const kind = (entry as { detail?: { kind?: number } }).detail?.kind ?? -1;
        gc.child(GC_KINDS[kind] ?? "other").observe(entry.duration / 1000);
      }
    });
    observer.observe({ entryTypes: ["gc"] });
    // Neither keeps the process alive: a process that is done exits whatever its metrics do.
    (observer as { unref?: () => void }).unref?.();
  };
  return {
    families() {
      if (!loop) start();
      const one = (value: number): Sample[] => [{ value }];
      const cpu = process.cpuUsage();
      const memory = process.memoryUsage();
      const families: MetricFamily[] = [
        counter("process_cpu_user_seconds_total", "User CPU time spent, seconds.", one(cpu.user / 1e6)),
        counter("process_cpu_system_seconds_total", "System CPU time spent, seconds.", one(cpu.system / 1e6)),
        counter(
          "process_cpu_seconds_total",
          "User and system CPU time spent, seconds.",
          one((cpu.user + cpu.system) / 1e6),
        ),
        gauge("process_resident_memory_bytes", "Resident memory size, bytes.", one(memory.rss)),
        gauge(
          "process_start_time_seconds",
          "Start time of the process since the Unix epoch, seconds.",
          one(startTimeSeconds),
        ),
      ];
      const fds = openFileDescriptors();
      if (fds !== undefined) families.push(gauge("process_open_fds", "Open file descriptors.", one(fds)));
      families.push(
        gauge("nodejs_heap_size_total_bytes", "V8 heap size, bytes.", one(memory.heapTotal)),
        gauge("nodejs_heap_size_used_bytes", "V8 heap used, bytes.", one(memory.heapUsed)),
        gauge(
          "nodejs_external_memory_bytes",
          "Memory of C++ objects bound to JavaScript objects, bytes.",
          one(memory.external),
        ),
        ...loopFamilies(loop),
        gc.family(),
        ...resourceFamilies(),
        gauge("nodejs_version_info", "Node.js version.", [
          { labels: { version: process.version }, value: 1 },
        ]),
      );
      return families;
    },
  };
}

/** Event-loop delay since the previous scrape; then the histogram starts over. */
function loopFamilies(loop: IntervalHistogram | undefined): MetricFamily[] {
  if (!loop) return [];
  const seconds = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0);
  const counted = loop.count > 0;
  const families = [
    gauge("nodejs_eventloop_lag_seconds", "Mean event-loop delay since the previous scrape, seconds.", [
      { value: counted ? seconds(loop.mean) : 0 },
    ]),
    gauge("nodejs_eventloop_lag_p50_seconds", "Median event-loop delay since the previous scrape, seconds.", [
      { value: counted ? seconds(loop.percentile(50)) : 0 },
    ]),
    gauge(
      "nodejs_eventloop_lag_p99_seconds",
      "99th percentile of the event-loop delay since the previous scrape, seconds.",
      [{ value: counted ? seconds(loop.percentile(99)) : 0 }],
    ),
    gauge(
      "nodejs_eventloop_lag_max_seconds",
      "Longest event-loop delay since the previous scrape, seconds.",
      [{ value: counted ? seconds(loop.max) : 0 }],
    ),
  ];
  loop.reset();
  return families;
}

/** What keeps the event loop alive, by type (process.getActiveResourcesInfo: handles, requests, timers). */
function resourceFamilies(): MetricFamily[] {
  const byType = new Map<string, number>();
  let total = 0;
  for (const type of process.getActiveResourcesInfo()) {
    byType.set(type, (byType.get(type) ?? 0) + 1);
    total++;
  }
  return [
    gauge(
      "nodejs_active_handles",
      "Resources keeping the event loop alive, by type (sockets, servers, timers, file requests...).",
      [...byType].map(([type, value]) => ({ labels: { type }, value })),
    ),
    gauge("nodejs_active_handles_total", "Resources keeping the event loop alive.", [{ value: total }]),
  ];
}

/** Linux only: the entries of /proc/self/fd, less the one the listing itself opened. */
function openFileDescriptors(): number | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    return readdirSync("/proc/self/fd").length - 1;
  } catch {
    return undefined;
  }
}

function counter(name: string, help: string, samples: Sample[]): MetricFamily {
  return { name, type: "counter", help, samples };
}

function gauge(name: string, help: string, samples: Sample[]): MetricFamily {
  return { name, type: "gauge", help, samples };
}
