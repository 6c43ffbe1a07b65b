import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PrivateRedis } from "../../test/support/redis.js";
import { type Child, cpuMicros, gcCounts, startChild, taskSetAvailable } from "../support/child.js";
import { buildRouter, type RouterRunner, startEdgesliceRouter, startRouterStore } from "./built-router.js";
import { type ProfileSummary, summariseCpuProfile } from "./cpu-profile.js";
import type { LoadPlan, LoadResult } from "./load-plan.js";
import { BENCH_HOST, PAYLOAD_PATHS, type PayloadName } from "./payloads.js";
import { medianOf, summariseRounds } from "./rounds.js";

export { formatProxyReport } from "./proxy-report.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const BACKEND = here("./backend-process.ts");
const MINIMAL = here("./minimal-proxy-process.ts");
const LOAD = here("./load-process.ts");

/** `edgeslice-log`: the same router with ACCESS_LOG=true (its stdout, the access log, goes to /dev/null). */
export type TargetName = "direct" | "minimal" | "edgeslice" | "edgeslice-log";
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
  /** Profile the edgeslice router at saturation, small body and 64 KiB, through its probe. */
  readonly profile: boolean;
  /**
   * Each cell is measured this many times, interleaved across targets (so a noisy neighbour hits every target
   * alike); the round of median rps is reported, with p50 and p99 the medians over the rounds (rounds.ts).
   */
  readonly rounds: number;
  /** Pin the proxy to its own core (load generator and backend share the other). */
  readonly pin: boolean;
  /** How the edgeslice router runs (built-router.ts); default tsx, `npm run bench` passes built. */
  readonly runner?: RouterRunner;
}

export interface Measurement {
  readonly target: TargetName;
  readonly payload: PayloadName;
  readonly mode: LoadMode;
  readonly result: LoadResult;
  /** rps of every round, for the spread. */
  readonly roundsRps: readonly number[];
  /** Every round's p99 and CPU per request, in round order (for comparisons round by round). */
  readonly roundsP99Ms: readonly number[];
  readonly roundsCpu: readonly number[];
  /** CPU time of the proxy process (the backend's for `direct`) per request, median over rounds. */
  readonly cpuMicrosPerRequest: number;
  /** V8 mark-compacts of the proxy process per 1,000 requests, every round (none counted for `direct`). */
  readonly roundsMarkCompacts: readonly number[];
}

export interface ProxyBenchReport {
  readonly measurements: readonly Measurement[];
  /** The router's CPU profile per body size (none without `profile`). */
  readonly profiles: readonly { readonly payload: PayloadName; readonly summary: ProfileSummary }[];
  readonly layout: string;
  readonly runner: RouterRunner;
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
  const runner = options.runner ?? "tsx";
  const routers = options.proxies.filter((name) => name !== "minimal");
  let store: PrivateRedis | undefined;
  try {
    if (runner === "built" && routers.length > 0) {
      log("  npm run build (the bench runs node dist/router.js; BENCH_ROUTER_RUNNER=tsx runs tsx) ...");
      await buildRouter();
    }
    const backend = startChild(BACKEND, { cpu: cpu.backend });
    children.push(backend);
    const { port: backendPort } = await backend.next<{ port: number }>("ready", 20_000);
    if (runner === "built" && routers.length > 0) store = await startRouterStore(backendPort);
    const routerStart = { runner, backendPort, redisUrl: store?.url, cpu: cpu.proxy };
    // Start-up (Node + tsx) is the slow part: load generator and proxies start side by side.
    const load = startChild(LOAD, { cpu: cpu.load });
    children.push(load);
    const minimal = options.proxies.includes("minimal")
      ? startChild(MINIMAL, { cpu: cpu.proxy, env: { BENCH_BACKEND_PORT: String(backendPort) } })
      : undefined;
    if (minimal) children.push(minimal);
    await load.next("ready", 30_000);
    const targets: { name: TargetName; port: number; process: Child; stop: () => Promise<void> }[] = [
      { name: "direct", port: backendPort, process: backend, stop: async () => {} },
    ];
    if (minimal) {
      const { port } = await minimal.next<{ port: number }>("ready", 30_000);
      targets.push({ name: "minimal", port, process: minimal, stop: () => minimal.stop() });
    }
    for (const name of routers) {
      const env: Record<string, string> = name === "edgeslice-log" ? { ACCESS_LOG: "true" } : {};
      const { child, port } = await startEdgesliceRouter({ ...routerStart, env });
      children.push(child);
      targets.push({ name, port, process: child, stop: () => child.stop() });
    }

    for (const payload of options.payloads) {
      for (const mode of ["saturation", "moderate"] as const) {
        const runs = new Map<TargetName, LoadResult[]>();
        const cpu = new Map<TargetName, number[]>();
        const markCompacts = new Map<TargetName, number[]>();
        for (let round = 0; round < options.rounds; round++) {
          for (const target of targets) {
            log(
              `  ${target.name.padEnd(13)} ${payload.padEnd(5)} ${mode} round ${round + 1}/${options.rounds} ...`,
            );
            const plan = planFor(options, target.port, payload, mode);
            if (round === 0 && options.warmupSeconds > 0) {
              await runLoad(load, { ...plan, durationSeconds: options.warmupSeconds });
            }
            const counted = target.name !== "direct";
            const gcBefore = counted ? await gcCounts(target.process) : undefined;
            const cpuBefore = await cpuMicros(target.process);
            const result = await runLoad(load, plan);
            const cpuUsed = (await cpuMicros(target.process)) - cpuBefore;
            const requests = Math.max(1, result.requests);
            runs.set(target.name, [...(runs.get(target.name) ?? []), result]);
            cpu.set(target.name, [...(cpu.get(target.name) ?? []), cpuUsed / requests]);
            if (gcBefore) {
              const gcAfter = await gcCounts(target.process);
              const perThousand = ((gcAfter.markCompacts - gcBefore.markCompacts) / requests) * 1000;
              markCompacts.set(target.name, [...(markCompacts.get(target.name) ?? []), perThousand]);
            }
          }
        }
        for (const target of targets) {
          const results = runs.get(target.name) ?? [];
          const median = summariseRounds(results);
          if (median) {
            measurements.push({
              target: target.name,
              payload,
              mode,
              result: median,
              roundsRps: results.map((r) => r.rps),
              roundsP99Ms: results.map((r) => r.p99Ms),
              roundsCpu: cpu.get(target.name) ?? [],
              cpuMicrosPerRequest: medianOf(cpu.get(target.name) ?? []),
              roundsMarkCompacts: markCompacts.get(target.name) ?? [],
            });
          }
        }
      }
    }
    for (const target of targets) await target.stop();

    const profiles: ProxyBenchReport["profiles"][number][] = [];
    if (options.profile && options.proxies.includes("edgeslice")) {
      for (const payload of ["small", "large"] as const) {
        const summary = await profileRouter(options, routerStart, load, payload, log);
        if (summary) profiles.push({ payload, summary });
      }
    }
    return { measurements, profiles, layout, runner };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await store?.stop();
  }
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

/**
 * A CPU profile of the router under the saturation load of `payload`: a fresh router, warmed up, then V8's
 * profiler on for the measured run only (router-probe.mjs), so start-up and module loading stay out of it.
 */
async function profileRouter(
  options: ProxyBenchOptions,
  routerStart: Parameters<typeof startEdgesliceRouter>[0],
  load: Child,
  payload: PayloadName,
  log: (line: string) => void,
): Promise<ProfileSummary | undefined> {
  const directory = await mkdtemp(join(tmpdir(), "edgeslice-cpuprof-"));
  const { child: router, port } = await startEdgesliceRouter(routerStart);
  try {
    log(`  edgeslice ${payload} saturation under the CPU profiler ...`);
    const plan = planFor(options, port, payload, "saturation");
    if (options.warmupSeconds > 0) await runLoad(load, { ...plan, durationSeconds: options.warmupSeconds });
    router.send({ type: "profile-start" });
    await router.next("profile-started", 10_000);
    await runLoad(load, plan);
    const file = join(directory, "router.cpuprofile");
    router.send({ type: "profile-stop", file });
    await router.next("profile-stopped", 30_000);
    return await summariseCpuProfile(file);
  } finally {
    await router.stop();
    await rm(directory, { recursive: true, force: true });
  }
}
