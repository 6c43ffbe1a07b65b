import { createHistogram } from "node:perf_hooks";
import autocannon from "autocannon";
import { exitOnStop, tell } from "../support/child.js";
import type { LoadPlan, LoadResult } from "./load-plan.js";

/**
 * The load generator, in a process of its own. autocannon's own histogram rounds to whole milliseconds, too
 * coarse for "< 1 ms added p99", so every response time it reports is also recorded here in microseconds.
 */
async function runOnce(plan: LoadPlan, durationSeconds: number): Promise<LoadResult> {
  const latencyMicros = createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 });
  const instance = autocannon({
    url: plan.url,
    connections: plan.connections,
    duration: durationSeconds,
    pipelining: 1,
    ...(plan.overallRate ? { overallRate: plan.overallRate } : {}),
    ...(plan.host ? { headers: { host: plan.host } } : {}),
  });
  instance.on("response", (_client: unknown, _status: number, _bytes: number, responseTimeMs: number) => {
    latencyMicros.record(Math.max(1, Math.round(responseTimeMs * 1000)));
  });
  const result = await instance;
  return {
    requests: result.requests.total,
    rps: result.requests.total / durationSeconds,
    p50Ms: latencyMicros.percentile(50) / 1000,
    p99Ms: latencyMicros.percentile(99) / 1000,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    bytesPerSecond: result.throughput.average,
  };
}

process.on("message", (raw) => {
  const message = raw as { type?: unknown; plan?: LoadPlan };
  if (message.type !== "run" || !message.plan) return;
  const plan = message.plan;
  void (async () => {
    if (plan.warmupSeconds > 0) await runOnce(plan, plan.warmupSeconds);
    const result = await runOnce(plan, plan.durationSeconds);
    tell({ type: "result", result });
  })().catch((error: unknown) => tell({ type: "failed", error: String(error) }));
});
exitOnStop(async () => {});
tell({ type: "ready" });
