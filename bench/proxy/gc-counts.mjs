// Loaded into each proxy under the bench (router-probe.mjs, minimal-proxy-process.ts): counts V8's collections
// by kind, so the report can give mark-compacts per 1,000 requests next to CPU per request. A mark-compact
// costs what many scavenges do, and a proxy that falls into a run of them (external memory from read buffers
// dropped as fast as they come) pays tens of µs per response for it. Counts, not durations: a count does not
// grow when a busy machine takes the core away. The pauses' total is kept too: it tells a process whose
// scavenges copy and promote its requests' objects (bench/README.md, "The router's GC regime") from one whose
// scavenges find them dead, which counts alone do not. Over IPC (bench/support/child.ts):
//   {type: "gc"} -> {type: "gc", scavenges, markCompacts, pauseMs}
// Plain JavaScript so the built router loads it without tsx.
import { constants, PerformanceObserver } from "node:perf_hooks";

const counts = { scavenges: 0, markCompacts: 0, pauseMs: 0 };

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = entry.detail?.kind;
    counts.pauseMs += entry.duration;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) counts.scavenges += 1;
    else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) counts.markCompacts += 1;
  }
}).observe({ entryTypes: ["gc"] });

process.on("message", (message) => {
  if (message?.type === "gc") process.send?.({ type: "gc", ...counts });
});
