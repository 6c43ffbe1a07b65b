import { readBenchFlags } from "./bench-flags.js";
import {
  type ConvergenceOptions,
  formatConvergenceReport,
  runConvergenceBench,
} from "./convergence/convergence-bench.js";
import { type MetricsBenchOptions, runMetricsBench } from "./metrics/metrics-bench.js";
import { formatMetricsReport } from "./metrics/report.js";
import { routerRunnerFromEnv } from "./proxy/built-router.js";
import { formatProxyReport, type ProxyBenchOptions, runProxyBench } from "./proxy/proxy-bench.js";
import { formatSteeringReport } from "./steering/report.js";
import { runSteeringBench, type SteeringBenchOptions } from "./steering/steering-bench.js";
import { formatWorkersReport } from "./workers/report.js";
import { runWorkersBench, WORKERS_READERS, type WorkersBenchOptions } from "./workers/workers-bench.js";

/**
 * `npm run bench` — every benchmark, printed as tables with ratios measured in the same run.
 * `npm run bench -- --smoke` — the same harness with short runs and a small convergence set (a quick check that
 * everything works, not figures to quote). `--only proxy|convergence|workers|metrics|steering` runs one part;
 * `--help` lists every flag (bench-flags.ts).
 */
const read = readBenchFlags(process.argv.slice(2));
if ("exitCode" in read) process.exit(read.exitCode);
const flags = read;
const { smoke, only } = flags;
const log = (line: string) => console.error(line);

/** `--access-log` adds the edgeslice router with ACCESS_LOG=true as a target of its own. */
const proxies: ProxyBenchOptions["proxies"] = flags.minimalOnly
  ? ["minimal"]
  : ["minimal", "edgeslice", ...(flags.accessLog ? (["edgeslice-log"] as const) : [])];

const proxyOptions: ProxyBenchOptions = smoke
  ? {
      durationSeconds: 1,
      warmupSeconds: 0,
      connections: 16,
      moderateRate: 500,
      moderateConnections: 4,
      payloads: ["small", "large"],
      proxies,
      profile: false,
      rounds: 1,
      pin: flags.pin,
      runner: routerRunnerFromEnv(),
    }
  : {
      durationSeconds: 5,
      warmupSeconds: 1,
      connections: 32,
      moderateRate: 2000,
      moderateConnections: 8,
      payloads: ["small", "large"],
      proxies,
      profile: flags.profile,
      rounds: 5,
      pin: flags.pin,
      runner: routerRunnerFromEnv(),
    };

/**
 * The sync's defaults (DEBOUNCE_MS 50, MAX_WAIT_MS 1000) first, at two sizes; then the larger size with a shorter
 * MAX_WAIT_MS, because under a steady 100 changes/s the debounce's quiet period never comes and every batch
 * waits for MAX_WAIT_MS.
 */
const convergenceOptions: ConvergenceOptions = smoke
  ? {
      runs: [
        { services: 50, label: "defaults" },
        { services: 200, label: "defaults" },
      ],
      endpointsPerService: 20,
      changesPerSecond: 50,
      changeSeconds: 2,
    }
  : {
      runs: [
        { services: 100, label: "defaults" },
        { services: 1000, label: "defaults" },
        { services: 1000, label: "MAX_WAIT_MS=100", syncEnv: { MAX_WAIT_MS: "100" } },
      ],
      endpointsPerService: 20,
      changesPerSecond: 100,
      changeSeconds: 10,
    };

/** The sizes (100 and 1,000 Services of 20 endpoints); the smoke run only checks the harness. */
const workersOptions: WorkersBenchOptions = smoke
  ? { sizes: [10, 50], endpointsPerService: 20, cpuRuns: 3, readers: WORKERS_READERS }
  : { sizes: [100, 1000], endpointsPerService: 20, cpuRuns: 15, readers: WORKERS_READERS };

/**
 * The sizes up to 10 clusters of 5,000 Services of 20 endpoints (1,000,000 endpoints), and the cardinality
 * settings at the largest; the smoke run only checks the harness.
 */
const metricsOptions: MetricsBenchOptions = smoke
  ? {
      sizes: [
        { clusters: 1, services: 50, endpoints: 20 },
        { clusters: 2, services: 100, endpoints: 20 },
      ],
      settingsAtLargest: ["cluster", "none"],
      scrapes: 1,
    }
  : {
      sizes: [
        { clusters: 1, services: 1000, endpoints: 20 },
        { clusters: 10, services: 1000, endpoints: 20 },
        { clusters: 10, services: 5000, endpoints: 20 },
      ],
      settingsAtLargest: ["cluster", "none"],
      scrapes: 3,
    };

/** Enough requests for the latency policy to measure each cluster first; three failover trials. */
const steeringOptions: SteeringBenchOptions = smoke
  ? { warmup: 100, requests: 200, concurrency: 4, failoverTrials: 1 }
  : { warmup: 400, requests: 2000, concurrency: 8, failoverTrials: 3 };

/** `--duration S`, `--warmup S` and `--rounds N` override the run lengths (e.g. for a quick profile). */
function withOverrides(options: ProxyBenchOptions): ProxyBenchOptions {
  return {
    ...options,
    durationSeconds: flags.durationSeconds ?? options.durationSeconds,
    warmupSeconds: flags.warmupSeconds ?? options.warmupSeconds,
    rounds: flags.rounds ?? options.rounds,
  };
}

async function main(): Promise<void> {
  if (only === undefined || only === "proxy") {
    log("proxy bench ...");
    const options = withOverrides(proxyOptions);
    const report = await runProxyBench(options, log);
    console.log(formatProxyReport(report, options));
    console.log("");
  }
  if (only === "profile") {
    log("router CPU profile only ...");
    const options = {
      ...withOverrides(proxyOptions),
      payloads: [],
      proxies: ["edgeslice"],
      profile: true,
    } as const;
    const report = await runProxyBench(options, log);
    console.log(formatProxyReport(report, options));
  }
  if (only === undefined || only === "convergence") {
    log("convergence bench ...");
    const results = await runConvergenceBench(convergenceOptions, log);
    console.log(formatConvergenceReport(results, convergenceOptions));
    console.log("");
  }
  if (only === undefined || only === "workers") {
    log("workers bench ...");
    const results = await runWorkersBench(workersOptions, log);
    console.log(formatWorkersReport(results));
    console.log("");
  }
  if (only === undefined || only === "metrics") {
    log("metrics bench ...");
    const results = await runMetricsBench(metricsOptions, log);
    console.log(formatMetricsReport(results));
    console.log("");
  }
  if (only === undefined || only === "steering") {
    log("steering bench ...");
    console.log(formatSteeringReport(await runSteeringBench(steeringOptions, log)));
    console.log("");
  }
}

await main();
