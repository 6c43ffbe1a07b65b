import { formatProfileSummary } from "../proxy/cpu-profile.js";
import { medianOf, pairedRounds, quotient } from "../proxy/rounds.js";
import { fixed, formatTable } from "../support/table.js";
import type { H2BenchOptions, H2BenchReport, H2Measurement, H2Target } from "./h2-bench.js";
import { formatHandshakes } from "./tls-handshakes.js";

/**
 * Medians over the rounds, and edgeslice against the minimal proxy judged round by round as the proxy bench
 * judges (rounds.ts pairedRounds): each round's edgeslice run against the minimal run beside it, then the median.
 */
export function formatH2Report(report: H2BenchReport, options: H2BenchOptions): string {
  const rows = report.measurements.map((m) => [
    `${m.target} ${m.payload}`,
    fixed(medianOf(m.roundsRps), 0),
    m.roundsRps.map((rps) => fixed(rps, 0)).join(" / "),
    fixed(medianOf(m.roundsCpu), 1),
    fixed(medianOf(m.roundsGcMicros), 1),
    m.roundsMarkCompacts.map((count) => fixed(count, 2)).join(" / "),
    fixed(medianOf(m.roundsMeanMs), 2),
    String(m.failures),
  ]);
  const header = [
    "run",
    "rps (median)",
    "rps per round",
    "CPU µs/req",
    "GC µs/req",
    "mark-compacts/1k req per round",
    "mean ms",
    "failed/non-2xx",
  ];
  const lines = [
    `HTTP/2 bench: h2load (h2c prior knowledge), ${options.clients} connections x ${options.streamsPerClient} streams, ${options.rounds} interleaved round(s) of ${options.durationSeconds} s per cell after ${options.warmupSeconds} s warm-up; medians over the rounds.`,
    `Layout: ${report.layout}.`,
    "small, large: HTTP/1.1 backend (bench/proxy/), minimal = minimal-h2-proxy-process.ts; grpc: unary calls of 32-byte messages to an h2c backend, minimal = minimal-grpc-proxy-process.ts.",
    formatTable(header, rows),
    "CPU µs/req: CPU time (user+system) of the proxy process per request. GC µs/req: V8's pauses per request, and",
    "mark-compacts per 1,000 requests (bench/proxy/gc-counts.mjs): bench/README.md says why a process can settle",
    "into a regime of costly scavenges for its life.",
  ];
  for (const payload of options.payloads) {
    const of = (target: H2Target) =>
      report.measurements.find((m) => m.target === target && m.payload === payload);
    const minimal = of("minimal");
    const edgeslice = of("edgeslice");
    if (minimal && edgeslice) lines.push(...verdict(payload, edgeslice, minimal));
  }
  for (const { payload, summary } of report.profiles) {
    lines.push(
      ...formatProfileSummary(
        `Where the router's time goes (V8 CPU profile of one more ${payload} run`,
        summary,
      ),
    );
  }
  if (report.tls) lines.push(...formatHandshakes(report.tls.edgeslice, report.tls.minimal));
  return lines.join("\n");
}

/** Edgeslice against the minimal proxy, round by round, and the median of those ratios. */
function verdict(payload: string, edgeslice: H2Measurement, minimal: H2Measurement): string[] {
  const rps = pairedRounds(edgeslice.roundsRps, minimal.roundsRps, quotient);
  const cpu = pairedRounds(edgeslice.roundsCpu, minimal.roundsCpu, quotient);
  const each = (ratios: readonly number[]) => ratios.map((ratio) => fixed(ratio, 2)).join(" / ");
  return [
    `${payload}: edgeslice/minimal rps ${fixed(medianOf(rps), 2)}x, CPU per request ${fixed(medianOf(cpu), 2)}x (medians of the rounds' ratios)`,
    `  rounds: rps ${each(rps)}; CPU per request ${each(cpu)}`,
  ];
}
