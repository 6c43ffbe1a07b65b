import { SETTLED_ANSWERS, type SteeringReport } from "./steering-bench.js";

/** The bench's lines: the issue's three figures first, then what they rest on. */
export function formatSteeringReport(report: SteeringReport): string {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  const failovers = report.failovers.map((trial) => trial.ms).sort((a, b) => a - b);
  const median = failovers[Math.floor((failovers.length - 1) / 2)] ?? Number.NaN;
  const shares = Object.entries(report.latencyShares)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([cluster, share]) => `${cluster} ${(share * 100).toFixed(1)}%`)
    .join(", ");
  const { requests, concurrency, warmup } = report.options;
  return [
    "Cross-cluster steering: Node router over three loopback clusters (pods answer after 5, 20 and 80 ms), router next to the 5 ms one",
    `(${requests} requests per policy after ${warmup} to warm up, ${concurrency} at a time; router, pods and client in one process)`,
    "",
    `steering p50 (latency policy): ${ms(report.latencyP50Ms)}`,
    `steering p50 (random): ${ms(report.randomP50Ms)}`,
    `steering p50 (fastest cluster, asked directly): ${ms(report.fastestP50Ms)}`,
    `steering failover (nearest cluster fails): ${Math.round(median)} ms`,
    "",
    `p99: latency policy ${ms(report.latencyP99Ms)}, random ${ms(report.randomP99Ms)}`,
    `latency policy's answers by cluster: ${shares}`,
    `failover trials (ms until ${SETTLED_ANSWERS} answers in a row came from another cluster; 503s clients saw): ${report.failovers
      .map((trial) => `${Math.round(trial.ms)} (${trial.failedRequests})`)
      .join(", ")}`,
  ].join("\n");
}
