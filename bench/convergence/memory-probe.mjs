// Loaded with `node --import` into the sync process under the convergence bench (built or tsx alike); the sync
// itself is unchanged. Answers over IPC:
//   {type: "memory"}                 -> {type: "memory", memory: {rssBytes, heapUsedBytes, maxRssBytes, ...}}
//   {type: "heap-snapshot", dir}     -> {type: "heap-snapshot", file} (v8.writeHeapSnapshot, after a full GC)
// Plain JavaScript so the built sync runs without tsx.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import v8 from "node:v8";

/** RssAnon (heap, malloc: data) and RssFile (mapped code: node, shared libraries) from /proc on Linux. */
function procStatusBytes(field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"));
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

function memorySample() {
  const usage = process.memoryUsage();
  return {
    rssBytes: usage.rss,
    heapUsedBytes: usage.heapUsed,
    heapTotalBytes: usage.heapTotal,
    externalBytes: usage.external + usage.arrayBuffers,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    rssAnonBytes: procStatusBytes("RssAnon"),
    rssFileBytes: procStatusBytes("RssFile"),
    codeBytes: v8.getHeapSpaceStatistics().find((space) => space.space_name === "code_space")
      ?.space_used_size,
  };
}

process.on("message", (message) => {
  if (message?.type === "memory") process.send?.({ type: "memory", memory: memorySample() });
  if (message?.type === "heap-snapshot") {
    const file = v8.writeHeapSnapshot(join(message.dir, `sync-${process.pid}.heapsnapshot`));
    process.send?.({ type: "heap-snapshot", file });
  }
});
// The IPC channel must not keep the sync alive on its own: it stops on SIGTERM, as in production.
process.channel?.unref();
