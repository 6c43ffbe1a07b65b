import { mkdtemp, readdir, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Child, cpuMicros, startChild, taskSetAvailable } from "../support/child.js";
import { fixed, formatTable, ratio, verdict } from "../support/table.js";
import { type ProfileSummary, summariseCpuProfile } from "./cpu-profile.js";
import type { LoadPlan, LoadResult } from "./load-plan.js";
import { BENCH_HOST, PAYLOAD_PATHS, type PayloadName } from "./payloads.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const BACKEND = here("./backend-process.ts");
const MINIMAL = here("./minimal-proxy-process.ts");
const EDGESLICE = here("./edgeslice-router-process.ts");
const LOAD = here("./load-process.ts");

export type TargetName = "direct" | "minimal" | "edgeslice";
export type LoadMode = "saturation" | "moderate";

export interface ProxyBenchOptions {
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly connections: number;
  /** Total requests per second in moderate mode. */
  readonly moderateRate: number;
  readonly moderateConnections: number;
  readonly payloads: readonly PayloadName[];
  /** Which proxies to start besides `direct` (all of them unless narrowed for a quick look). */
  readonly proxies: readonly Exclude<TargetName, "direct">[];
  /** Profile the edgeslice router (small body, saturation) with `--cpu-prof`. */
  readonly profile: boolean;
  /**
   * Each cell is measured this many times, interleaved across targets (so a noisy neighbour hits every target
   * alike), and the median run by rps is reported.
   */
  readonly rounds: number;
  /** Pin the proxy to its own core (load generator and backend share the other). */
  readonly pin: boolean;
}

export interface Measurement {
  readonly target: TargetName;
  readonly payload: PayloadName;
  readonly mode: LoadMode;
  readonly result: LoadResult;
  /** rps of every round, for the spread. */
  readonly roundsRps: readonly number[];
  /** CPU time of the proxy process (the backend's for `direct`) per request, median over rounds. */
  readonly cpuMicrosPerRequest: number;
}

export interface ProxyBenchReport {
  readonly measurements: readonly Measurement[];
  readonly profile: ProfileSummary | undefined;
  readonly layout: string;
}

interface Cpus {
  readonly proxy: number | undefined;
  readonly backend: number | undefined;
  readonly load: number | undefined;
}

export async function runProxyBench(
  options: ProxyBenchOptions,
  log: (line: string) => void,
): Promise<ProxyBenchReport> {
  const pin = options.pin && taskSetAvailable() && cpus().length >= 2;
  const cpu: Cpus = pin
    ? { proxy: 1, backend: 0, load: 0 }
    : { proxy: undefined, backend: undefined, load: undefined };
  const layout = pin
    ? "pinned with taskset: proxy under test on CPU 1; backend and load generator share CPU 0 (separate processes)"
    : `unpinned: backend, proxy and load generator are separate processes sharing ${cpus().length} CPU(s)`;
  const children: Child[] = [];
  const measurements: Measurement[] = [];
  try {
    const backend = startChild(BACKEND, { cpu: cpu.backend });
    children.push(backend);
    const { port: backendPort } = await backend.next<{ port: number }>("ready", 20_000);
    // Start-up (Node + tsx) is the slow part: load generator and proxies start side by side.
    const load = startChild(LOAD, { cpu: cpu.load });
    children.push(load);
    const proxies = options.proxies.map((name) => {
      const script = name === "minimal" ? MINIMAL : EDGESLICE;
      const proxy = startChild(script, { cpu: cpu.proxy, env: { BENCH_BACKEND_PORT: String(backendPort) } });
      children.push(proxy);
      return { name, proxy };
    });
    await load.next("ready", 30_000);
    const targets: { name: TargetName; port: number; process: Child; stop: () => Promise<void> }[] = [
      { name: "direct", port: backendPort, process: backend, stop: async () => {} },
    ];
    for (const { name, proxy } of proxies) {
      const { port } = await proxy.next<{ port: number }>("ready", 30_000);
      targets.push({ name, port, process: proxy, stop: () => proxy.stop() });
    }

    for (const payload of options.payloads) {
      for (const mode of ["saturation", "moderate"] as const) {
        const runs = new Map<TargetName, LoadResult[]>();
        const cpu = new Map<TargetName, number[]>();
        for (let round = 0; round < options.rounds; round++) {
          for (const target of targets) {
            log(
              `  ${target.name.padEnd(9)} ${payload.padEnd(5)} ${mode} round ${round + 1}/${options.rounds} ...`,
            );
            const plan = planFor(options, target.port, payload, mode);
            if (round === 0 && options.warmupSeconds > 0) {
              await runLoad(load, { ...plan, durationSeconds: options.warmupSeconds });
            }
            const cpuBefore = await cpuMicros(target.process);
            const result = await runLoad(load, plan);
            const cpuUsed = (await cpuMicros(target.process)) - cpuBefore;
            runs.set(target.name, [...(runs.get(target.name) ?? []), result]);
            cpu.set(target.name, [...(cpu.get(target.name) ?? []), cpuUsed / Math.max(1, result.requests)]);
          }
        }
        for (const target of targets) {
          const results = runs.get(target.name) ?? [];
          const median = medianByRps(results);
          if (median) {
            measurements.push({
              target: target.name,
              payload,
              mode,
              result: median,
              roundsRps: results.map((r) => r.rps),
              cpuMicrosPerRequest: medianOf(cpu.get(target.name) ?? []),
            });
          }
        }
      }
    }
    for (const target of targets) await target.stop();

    const profile =
      options.profile && options.proxies.includes("edgeslice")
        ? await profileRouter(options, backendPort, cpu, load, log)
        : undefined;
    return { measurements, profile, layout };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
  }
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

function medianByRps(results: readonly LoadResult[]): LoadResult | undefined {
  const sorted = [...results].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function planFor(options: ProxyBenchOptions, port: number, payload: PayloadName, mode: LoadMode): LoadPlan {
  const base = {
    url: `http://127.0.0.1:${port}${PAYLOAD_PATHS[payload]}`,
    host: BENCH_HOST,
    durationSeconds: options.durationSeconds,
    warmupSeconds: 0,
  };
  return mode === "saturation"
    ? { ...base, connections: options.connections }
    : { ...base, connections: options.moderateConnections, overallRate: options.moderateRate };
}

async function runLoad(load: Child, plan: LoadPlan): Promise<LoadResult> {
  load.send({ type: "run", plan });
  const limitMs = (plan.durationSeconds + plan.warmupSeconds) * 1000 + 30_000;
  const reply = await load.next<{ type: string; result?: LoadResult; error?: string }>(
    ["result", "failed"],
    limitMs,
  );
  if (!reply.result) throw new Error(`load generator failed: ${reply.error ?? "no result"}`);
  return reply.result;
}

async function profileRouter(
  options: ProxyBenchOptions,
  backendPort: number,
  cpu: Cpus,
  load: Child,
  log: (line: string) => void,
): Promise<ProfileSummary | undefined> {
  const directory = await mkdtemp(join(tmpdir(), "edgeslice-cpuprof-"));
  try {
    const router = startChild(EDGESLICE, {
      cpu: cpu.proxy,
      nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${directory}`],
      env: { BENCH_BACKEND_PORT: String(backendPort) },
    });
    const { port } = await router.next<{ port: number }>("ready", 30_000);
    log("  edgeslice small saturation under --cpu-prof ...");
    await runLoad(load, {
      ...planFor(options, port, "small", "saturation"),
      warmupSeconds: options.warmupSeconds,
    });
    await router.stop();
    const file = (await readdir(directory)).find((name) => name.endsWith(".cpuprofile"));
    return file ? await summariseCpuProfile(join(directory, file)) : undefined;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

export function formatProxyReport(report: ProxyBenchReport, options: ProxyBenchOptions): string {
  const find = (target: TargetName, payload: PayloadName, mode: LoadMode) =>
    report.measurements.find((m) => m.target === target && m.payload === payload && m.mode === mode)?.result;
  const rows: string[][] = report.measurements.map(
    ({ target, payload, mode, result, roundsRps, cpuMicrosPerRequest }) => [
      `${target} ${payload} ${mode}`,
      fixed(result.rps, 0),
      roundsRps.map((rps) => fixed(rps, 0)).join(" / "),
      fixed(cpuMicrosPerRequest, 1),
      fixed(result.p50Ms, 3),
      fixed(result.p99Ms, 3),
      String(result.non2xx + result.errors + result.timeouts),
    ],
  );
  const lines = [
    `Proxy bench: ${options.rounds} interleaved round(s) of ${options.durationSeconds} s per cell (median by rps shown, its p50/p99) after ${options.warmupSeconds} s warm-up; saturation = ${options.connections} keep-alive connections, moderate = ${options.moderateRate} req/s over ${options.moderateConnections} connections.`,
    `Layout: ${report.layout}.`,
    formatTable(
      ["run", "rps (median)", "rps per round", "CPU µs/req", "p50 ms", "p99 ms", "non-2xx/errors"],
      rows,
    ),
    "CPU µs/req: CPU time (user+system) of the proxy process per request; for direct, the backend's.",
    "",
  ];
  const ratioRows: string[][] = [];
  for (const payload of options.payloads) {
    const direct = find("direct", payload, "saturation");
    const minimal = find("minimal", payload, "saturation");
    const edgeslice = find("edgeslice", payload, "saturation");
    const directModerate = find("direct", payload, "moderate");
    const minimalModerate = find("minimal", payload, "moderate");
    const edgesliceModerate = find("edgeslice", payload, "moderate");
    if (!direct || !minimal || !edgeslice || !directModerate || !minimalModerate || !edgesliceModerate)
      continue;
    const rpsRatio = edgeslice.rps / minimal.rps;
    const addedVsMinimal = edgesliceModerate.p99Ms - minimalModerate.p99Ms;
    const addedVsDirect = edgesliceModerate.p99Ms - directModerate.p99Ms;
    const cpuOf = (target: TargetName) =>
      report.measurements.find((m) => m.target === target && m.payload === payload && m.mode === "saturation")
        ?.cpuMicrosPerRequest ?? Number.NaN;
    ratioRows.push([
      payload,
      ratio(edgeslice.rps, minimal.rps),
      ratio(cpuOf("edgeslice"), cpuOf("minimal")),
      ratio(edgeslice.rps, direct.rps),
      fixed(addedVsMinimal, 3),
      fixed(addedVsDirect, 3),
      `${verdict(rpsRatio >= 0.85)} (>= 0.85x) / ${verdict(addedVsDirect < 1)} (< 1 ms vs direct)`,
    ]);
  }
  lines.push(
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
  );
  if (report.profile) {
    lines.push(
      "",
      `Where the router's time goes (--cpu-prof, small body at saturation; idle ${(report.profile.idleShare * 100).toFixed(1)}% of samples; shares of busy time):`,
      formatTable(
        ["area", "self %"],
        report.profile.byArea.slice(0, 10).map((a) => [a.area, fixed(a.share * 100, 1)]),
      ),
      "",
      formatTable(
        ["function", "self %", "where", "native frame called from"],
        report.profile.top.map((entry) => [
          entry.name,
          fixed(entry.share * 100, 1),
          entry.location,
          entry.calledFrom ?? "",
        ]),
      ),
    );
  }
  return lines.join("\n");
}
