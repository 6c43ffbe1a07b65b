import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import type { PrivateRedis } from "../../test/support/redis.js";
import {
  buildRouter,
  type RouterRunner,
  startEdgesliceRouter,
  startRouterStore,
} from "../proxy/built-router.js";
import { BENCH_HOST, PAYLOAD_PATHS, type PayloadName } from "../proxy/payloads.js";
import { medianOf } from "../proxy/rounds.js";
import { type Child, cpuMicros, startChild, taskSetAvailable } from "../support/child.js";
import { type H2loadResult, runH2load } from "./h2load.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const BACKEND = here("../proxy/backend-process.ts");
const MINIMAL_H2 = here("./minimal-h2-proxy-process.ts");

export type H2Target = "minimal-h2" | "edgeslice";

export interface H2BenchOptions {
  readonly rounds: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  /** h2load connections, and streams each keeps in flight. */
  readonly clients: number;
  readonly streamsPerClient: number;
  readonly payloads: readonly PayloadName[];
  readonly pin: boolean;
  readonly runner: RouterRunner;
}

export interface H2Measurement {
  readonly target: H2Target;
  readonly payload: PayloadName;
  /** rps, CPU µs per request and mean ms of every round, in round order. */
  readonly roundsRps: readonly number[];
  readonly roundsCpu: readonly number[];
  readonly roundsMeanMs: readonly number[];
  /** Requests that failed or were not 2xx, over every round. */
  readonly failures: number;
}

export interface H2BenchReport {
  readonly measurements: readonly H2Measurement[];
  readonly layout: string;
}

interface Target {
  readonly name: H2Target;
  readonly port: number;
  readonly process: Child;
}

/**
 * HTTP/2 clients (h2load, h2c prior knowledge) through the edgeslice router and through a minimal `node:http2`
 * proxy to the same HTTP/1.1 backend, in interleaved rounds, with the CPU each proxy process spent per request.
 */
export async function runH2Bench(
  options: H2BenchOptions,
  log: (line: string) => void,
): Promise<H2BenchReport> {
  const pin = options.pin && taskSetAvailable() && cpus().length >= 2;
  const cpu = pin ? { proxy: 1, other: 0 } : { proxy: undefined, other: undefined };
  const layout = pin
    ? "pinned with taskset: proxy under test on CPU 1; backend and h2load share CPU 0"
    : `unpinned: backend, proxy and h2load share ${cpus().length} CPU(s)`;
  const children: Child[] = [];
  let store: PrivateRedis | undefined;
  try {
    if (options.runner === "built") {
      log("  npm run build (the bench runs node dist/router.js) ...");
      await buildRouter();
    }
    const backend = startChild(BACKEND, { cpu: cpu.other });
    children.push(backend);
    const { port: backendPort } = await backend.next<{ port: number }>("ready", 20_000);
    if (options.runner === "built") store = await startRouterStore(backendPort);
    const minimal = startChild(MINIMAL_H2, {
      cpu: cpu.proxy,
      env: { BENCH_BACKEND_PORT: String(backendPort) },
    });
    children.push(minimal);
    const { port: minimalPort } = await minimal.next<{ port: number }>("ready", 30_000);
    const router = await startEdgesliceRouter({
      runner: options.runner,
      backendPort,
      redisUrl: store?.url,
      cpu: cpu.proxy,
    });
    children.push(router.child);
    const targets: Target[] = [
      { name: "minimal-h2", port: minimalPort, process: minimal },
      { name: "edgeslice", port: router.port, process: router.child },
    ];
    const measurements: H2Measurement[] = [];
    for (const payload of options.payloads) {
      const rounds = new Map<H2Target, { result: H2loadResult; cpu: number }[]>();
      for (let round = 0; round < options.rounds; round++) {
        for (const target of targets) {
          log(`  ${target.name.padEnd(10)} ${payload.padEnd(5)} round ${round + 1}/${options.rounds} ...`);
          const before = await cpuMicros(target.process);
          const result = await runH2load({
            connectTo: `127.0.0.1:${target.port}`,
            url: `http://${BENCH_HOST}${PAYLOAD_PATHS[payload]}`,
            clients: options.clients,
            streamsPerClient: options.streamsPerClient,
            durationSeconds: options.durationSeconds,
            warmupSeconds: round === 0 ? options.warmupSeconds : 0,
            cpu: cpu.other,
          });
          // The warm-up's CPU is in the difference too; its requests are not in `succeeded`: rounds after the
          // first have none, and the report takes medians over rounds.
          const used = (await cpuMicros(target.process)) - before;
          rounds.set(target.name, [
            ...(rounds.get(target.name) ?? []),
            { result, cpu: used / Math.max(1, result.succeeded) },
          ]);
        }
      }
      for (const target of targets) {
        const runs = rounds.get(target.name) ?? [];
        measurements.push({
          target: target.name,
          payload,
          roundsRps: runs.map((run) => run.result.rps),
          roundsCpu: runs.map((run) => run.cpu),
          roundsMeanMs: runs.map((run) => run.result.meanMs),
          failures: runs.reduce((sum, run) => sum + run.result.failed + run.result.non2xx, 0),
        });
      }
    }
    return { measurements, layout };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await store?.stop();
  }
}

/** Medians over the rounds, and edgeslice against the minimal proxy. */
export function formatH2Report(report: H2BenchReport, options: H2BenchOptions): string {
  const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : "-");
  const rows = report.measurements.map((m) => [
    `${m.target} ${m.payload}`,
    fixed(medianOf(m.roundsRps), 0),
    m.roundsRps.map((rps) => fixed(rps, 0)).join(" / "),
    fixed(medianOf(m.roundsCpu), 1),
    fixed(medianOf(m.roundsMeanMs), 2),
    String(m.failures),
  ]);
  const header = ["run", "rps (median)", "rps per round", "CPU µs/req", "mean ms", "failed/non-2xx"];
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => (row[i] ?? "").length)),
  );
  const line = (cells: readonly string[]) => cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ");
  const lines = [
    `HTTP/2 bench: h2load (h2c prior knowledge), ${options.clients} connections x ${options.streamsPerClient} streams, ${options.rounds} interleaved round(s) of ${options.durationSeconds} s per cell after ${options.warmupSeconds} s warm-up; medians over the rounds.`,
    `Layout: ${report.layout}. Backend: HTTP/1.1 (bench/proxy/backend-process.ts).`,
    line(header),
    ...rows.map(line),
    "CPU µs/req: CPU time (user+system) of the proxy process per request.",
  ];
  for (const payload of options.payloads) {
    const of = (target: H2Target) =>
      report.measurements.find((m) => m.target === target && m.payload === payload);
    const minimal = of("minimal-h2");
    const edgeslice = of("edgeslice");
    if (!minimal || !edgeslice) continue;
    const rps = medianOf(edgeslice.roundsRps) / medianOf(minimal.roundsRps);
    const cpu = medianOf(edgeslice.roundsCpu) / medianOf(minimal.roundsCpu);
    lines.push(`${payload}: edgeslice/minimal-h2 rps ${fixed(rps, 2)}x, CPU per request ${fixed(cpu, 2)}x`);
  }
  return lines.join("\n");
}
