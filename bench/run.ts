import { readBenchFlags } from "./bench-flags.js";
import {
  type ConvergenceOptions,
  formatConvergenceReport,
  runConvergenceBench,
} from "./convergence/convergence-bench.js";
import { type H2BenchOptions, runH2Bench } from "./h2/h2-bench.js";
import { formatH2Report } from "./h2/h2-report.js";
import { h2loadAvailable } from "./h2/h2load.js";
import { type MetricsBenchOptions, runMetricsBench } from "./metrics/metrics-bench.js";
import { formatMetricsReport } from "./metrics/report.js";
import { routerRunnerFromEnv } from "./proxy/built-router.js";
import { formatProxyReport, type ProxyBenchOptions, runProxyBench } from "./proxy/proxy-bench.js";
import { formatScaleReport } from "./scale/report.js";
import { runScaleBench, type ScaleBenchOptions } from "./scale/scale-bench.js";
import { formatSteeringReport } from "./steering/report.js";
import { runSteeringBench, type SteeringBenchOptions } from "./steering/steering-bench.js";
import { formatWorkersReport } from "./workers/report.js";
import { runWorkersBench, WORKERS_READERS, type WorkersBenchOptions } from "./workers/workers-bench.js";

/**
 * `npm run bench` — every benchmark, printed as tables with ratios measured in the same run.
 * `npm run bench -- --smoke` — the same harness with short runs and a small convergence set (a quick check that
 * everything works, not figures to quote). `--only proxy|convergence|workers|metrics|steering|scale|h2` runs one part;
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

/**
 * The sizes (issue 26): the sync at 100,000 endpoints (4,750 Services of 20 and 5 of 1,000 in 10 slices)
 * under 100 slice changes/s; the router at 1,000, 10,000 and 50,000 Services (the last: 10 clusters, 1,000,000
 * endpoints); the Workers reader at 1,000 and 10,000. The smoke run only checks the harness.
 */
const scaleOptions: ScaleBenchOptions = smoke
  ? {
      sync: {
        smallServices: 40,
        endpointsPerSmall: 20,
        largeServices: 1,
        endpointsPerLarge: 100,
        slicesPerLarge: 2,
        changesPerSecond: 20,
        changeSeconds: 1,
      },
      routerSizes: [
        { clusters: 1, servicesPerCluster: 20 },
        { clusters: 2, servicesPerCluster: 40 },
      ],
      routerChanges: 5,
      routerChangesPerSecond: 20,
      workersSizes: [20, 80],
      workersChanges: 3,
      endpointsPerService: 20,
    }
  : {
      sync: {
        smallServices: 4750,
        endpointsPerSmall: 20,
        largeServices: 5,
        endpointsPerLarge: 1000,
        slicesPerLarge: 10,
        changesPerSecond: 100,
        changeSeconds: 10,
      },
      routerSizes: [
        { clusters: 1, servicesPerCluster: 1000 },
        { clusters: 10, servicesPerCluster: 1000 },
        { clusters: 10, servicesPerCluster: 5000 },
      ],
      routerChanges: 40,
      routerChangesPerSecond: 10,
      workersSizes: [1000, 10000],
      workersChanges: 15,
      endpointsPerService: 20,
      profileDir: process.env.BENCH_SCALE_PROFILE_DIR,
    };

/** HTTP/2 clients and unary gRPC calls through the router and minimal node:http2 proxies (bench/h2/): 3 rounds of 10 s per cell. */
const h2Options: H2BenchOptions = {
  rounds: flags.rounds ?? (smoke ? 1 : 3),
  durationSeconds: flags.durationSeconds ?? (smoke ? 1 : 10),
  warmupSeconds: flags.warmupSeconds ?? (smoke ? 0 : 2),
  clients: 16,
  streamsPerClient: 16,
  payloads: ["small", "large", "grpc"],
  pin: flags.pin,
  runner: routerRunnerFromEnv(),
  tls: true,
  profile: flags.profile,
};

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
  if (only === undefined || only === "scale") {
    log("scale bench ...");
    const result = await runScaleBench(scaleOptions, log);
    console.log(formatScaleReport(result, scaleOptions.sync.changesPerSecond));
    console.log("");
  }
  if (only === undefined || only === "h2") {
    if (!h2loadAvailable()) {
      log("h2 bench skipped: no /usr/bin/h2load (apt-get install nghttp2-client)");
    } else {
      log("h2 bench ...");
      const report = await runH2Bench(h2Options, log);
      console.log(formatH2Report(report, h2Options));
      console.log("");
    }
  }
}

await main();
