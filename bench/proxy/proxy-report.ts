import { fixed, formatTable, ratio, verdict } from "../support/table.js";
import { formatProfileSummary } from "./cpu-profile.js";
import type { LoadMode, ProxyBenchOptions, ProxyBenchReport, TargetName } from "./proxy-bench.js";
import { difference, medianOf, pairedRounds, quotient } from "./rounds.js";

/** Issue 17's targets, medians over the rounds of one run: edgeslice against the hand-written undici proxy. */
const TARGETS = {
  rps: { small: 1.0, large: 0.95 },
  cpuPerRequest: 1.05,
  addedP99Ms: 0.5,
} as const;

const RUNNERS = {
  built: "node dist/router.js (npm run build) on a private redis-server holding the bench's route",
  tsx: "node --import tsx edgeslice-router-process.ts (startNodeRouter over a MemoryStore)",
} as const;

export function formatProxyReport(report: ProxyBenchReport, options: ProxyBenchOptions): string {
  const measurement = (target: TargetName, payload: string, mode: LoadMode) =>
    report.measurements.find((m) => m.target === target && m.payload === payload && m.mode === mode);
  const rows: string[][] = report.measurements.map(
    ({ target, payload, mode, result, roundsRps, cpuMicrosPerRequest, roundsMarkCompacts }) => [
      `${target} ${payload} ${mode}`,
      fixed(result.rps, 0),
      roundsRps.map((rps) => fixed(rps, 0)).join(" / "),
      fixed(cpuMicrosPerRequest, 1),
      roundsMarkCompacts.map((count) => fixed(count, 1)).join(" / "),
      fixed(result.p50Ms, 3),
      fixed(result.p99Ms, 3),
      String(result.non2xx + result.errors + result.timeouts),
    ],
  );
  const lines = [
    `Proxy bench: ${options.rounds} interleaved round(s) of ${options.durationSeconds} s per cell (the round of median rps shown; p50, p99 and CPU: medians over the rounds; targets judged round by round) after ${options.warmupSeconds} s warm-up; saturation = ${options.connections} keep-alive connections, moderate = ${options.moderateRate} req/s over ${options.moderateConnections} connections.`,
    `Layout: ${report.layout}.`,
    `edgeslice runs as: ${RUNNERS[report.runner]}.`,
    formatTable(
      [
        "run",
        "rps (median)",
        "rps per round",
        "CPU µs/req",
        "mark-compacts/1k req per round",
        "p50 ms",
        "p99 ms",
        "non-2xx/errors",
      ],
      rows,
    ),
    "CPU µs/req: CPU time (user+system) of the proxy process per request; for direct, the backend's.",
    "mark-compacts/1k req: V8's full collections in the proxy process per 1,000 requests (bench/proxy/gc-counts.mjs).",
    "",
  ];
  const ratioRows: string[][] = [];
  const roundRows: string[][] = [];
  const logRows: string[][] = [];
  for (const payload of options.payloads) {
    const at = (target: TargetName, mode: LoadMode) => measurement(target, payload, mode);
    const direct = at("direct", "saturation")?.result;
    const minimalRun = at("minimal", "saturation");
    const edgesliceRun = at("edgeslice", "saturation");
    const edgeslice = edgesliceRun?.result;
    const directModerate = at("direct", "moderate")?.result;
    const minimalModerateRun = at("minimal", "moderate");
    const edgesliceModerateRun = at("edgeslice", "moderate");
    const edgesliceModerate = edgesliceModerateRun?.result;
    const cpuOf = (target: TargetName) => at(target, "saturation")?.cpuMicrosPerRequest ?? Number.NaN;
    const logged = at("edgeslice-log", "saturation");
    if (edgeslice && logged) {
      logRows.push([
        payload,
        ratio(logged.result.rps, edgeslice.rps),
        ratio(cpuOf("edgeslice-log"), cpuOf("edgeslice")),
        fixed(cpuOf("edgeslice-log") - cpuOf("edgeslice"), 1),
        fixed(
          (at("edgeslice-log", "moderate")?.result.p99Ms ?? Number.NaN) - (edgesliceModerate?.p99Ms ?? 0),
          3,
        ),
      ]);
    }
    if (!direct || !minimalRun || !edgeslice || !directModerate || !minimalModerateRun || !edgesliceModerate)
      continue;
    // Round by round (rounds.ts): each round's edgeslice run against the minimal run just before it.
    const rpsRounds = pairedRounds(edgesliceRun.roundsRps, minimalRun.roundsRps, quotient);
    const cpuRounds = pairedRounds(edgesliceRun.roundsCpu, minimalRun.roundsCpu, quotient);
    const p99Rounds = pairedRounds(
      edgesliceModerateRun.roundsP99Ms,
      minimalModerateRun.roundsP99Ms,
      difference,
    );
    const rpsRatio = medianOf(rpsRounds);
    const cpuRatio = medianOf(cpuRounds);
    const addedVsMinimal = medianOf(p99Rounds);
    const rpsTarget = payload === "large" ? TARGETS.rps.large : TARGETS.rps.small;
    const each = (values: readonly number[], digits: number) =>
      values.map((value) => value.toFixed(digits)).join(" / ");
    roundRows.push([payload, each(rpsRounds, 2), each(cpuRounds, 2), each(p99Rounds, 3)]);
    ratioRows.push([
      payload,
      `${rpsRatio.toFixed(2)}x`,
      `${cpuRatio.toFixed(2)}x`,
      ratio(edgeslice.rps, direct.rps),
      fixed(addedVsMinimal, 3),
      fixed(edgesliceModerate.p99Ms - directModerate.p99Ms, 3),
      [
        `rps ${verdict(rpsRatio >= rpsTarget)} (>= ${rpsTarget.toFixed(2)}x)`,
        `CPU ${verdict(cpuRatio <= TARGETS.cpuPerRequest)} (<= ${TARGETS.cpuPerRequest.toFixed(2)}x)`,
        `p99 ${verdict(addedVsMinimal < TARGETS.addedP99Ms)} (< ${TARGETS.addedP99Ms} ms vs minimal)`,
      ].join(" / "),
    ]);
  }
  lines.push(
    "Against minimal, round by round: each round's edgeslice run against the minimal run just before it, the",
    "median over the rounds (rps and CPU as ratios, p99 as a difference); the other columns compare the medians.",
    formatTable(
      [
        "payload",
        "edgeslice/minimal rps",
        "CPU/req edgeslice/minimal",
        "edgeslice/direct rps",
        "added p99 vs minimal (moderate) ms",
        "added p99 vs direct (moderate) ms",
        "targets",
      ],
      ratioRows,
    ),
    "",
    formatTable(
      ["payload", "rps ratio per round", "CPU/req ratio per round", "added p99 per round ms"],
      roundRows,
    ),
  );
  if (logRows.length > 0) {
    lines.push(
      "",
      "Access log (ACCESS_LOG=true, every request; stdout to /dev/null) against the same router without it:",
      formatTable(
        ["payload", "rps log/no log", "CPU/req log/no log", "CPU µs/req added", "p99 added (moderate) ms"],
        logRows,
      ),
    );
  }
  for (const { payload, summary } of report.profiles) {
    const body = payload === "large" ? "64 KiB" : "small";
    const title = `Where the router's time goes (V8 CPU profile of the measured run after warm-up, ${body} body at saturation`;
    lines.push(...formatProfileSummary(title, summary));
  }
  return lines.join("\n");
}
