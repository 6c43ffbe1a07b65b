import { monitorEventLoopDelay } from "node:perf_hooks";
import { BACKEND_SERIES } from "../../functions/core/observability/backend-metrics.js";
import { RouterMetrics } from "../../functions/core/observability/metrics.js";
import { eachServiceBackends } from "../../functions/core/selection/backend-states.js";
import { parseRouterConfig } from "../../functions/core/settings/config.js";
import { startNodeRouter } from "../../functions/node/server.js";
import { createJsonLogger } from "../../lib/logger.js";
import { exitOnStop, tell } from "../support/child.js";
import { benchStore, type MetricsStoreSize } from "./store-fixture.js";

/**
 * The Node router as `npm run router` wires it, over an in-memory store of BENCH_CLUSTERS × BENCH_SERVICES
 * Services of BENCH_ENDPOINTS endpoints (the Redis source serves from the same kind of snapshot), one router per
 * METRICS_BACKENDS value on 127.0.0.1. It measures its own event loop: `arm` resets the delay histogram before a
 * scrape, `read` answers its max, its 99th percentile and the busiest 1 ms tick after it. `render-at-once` times the whole exposition rendered in one go, as
 * every scrape did before it was sliced: how long that held the loop.
 */
function sizeFromEnv(): MetricsStoreSize {
  const read = (name: string) => {
    const value = Number(process.env[name]);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
    return value;
  };
  return {
    clusters: read("BENCH_CLUSTERS"),
    services: read("BENCH_SERVICES"),
    endpoints: read("BENCH_ENDPOINTS"),
  };
}

const store = await benchStore(sizeFromEnv());
const logger = createJsonLogger({ level: "error", base: { component: "bench-metrics-router" } });
const routers = await Promise.all(
  BACKEND_SERIES.map(async (series) => {
    const config = parseRouterConfig({ PORT: "0", ADMIN_TOKEN: "bench", METRICS_BACKENDS: series });
    const router = await startNodeRouter(config, {
      source: store,
      host: "127.0.0.1",
      logger,
      drainMs: 1_000,
    });
    return { series, port: router.adminPort, close: () => router.close() };
  }),
);

const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();

/**
 * The most CPU the process used between two runs of a 1 ms timer: what held the loop by working, apart from time
 * the process waited to be scheduled (which the delay counts too on a shared machine). Process CPU includes
 * V8's helper threads, so it is an upper bound.
 */
let busiestMs = 0;
let cpuBefore = process.cpuUsage();
setInterval(() => {
  const used = process.cpuUsage(cpuBefore);
  cpuBefore = process.cpuUsage();
  busiestMs = Math.max(busiestMs, (used.user + used.system) / 1000);
}, 1).unref();

function renderAtOnceMs(): number {
  const snapshot = store.current();
  const started = performance.now();
  new RouterMetrics().render({
    inFlight: 0,
    ejected: 0,
    snapshot: {
      loaded: true,
      version: snapshot.version,
      ageSeconds: 0,
      clusters: 0,
      staleClusters: 0,
      storeConnected: true,
    },
    backends: eachServiceBackends(snapshot, undefined),
    clusters: snapshot.clusters,
  });
  return performance.now() - started;
}

process.on("message", (raw) => {
  const type = (raw as { type?: unknown }).type;
  if (type === "arm") {
    delay.reset();
    busiestMs = 0;
    tell({ type: "armed" });
  } else if (type === "read") {
    tell({ type: "delay", maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6, busiestMs });
  } else if (type === "render-at-once") {
    tell({ type: "rendered", ms: renderAtOnceMs() });
  }
});

tell({ type: "ready", ports: Object.fromEntries(routers.map((router) => [router.series, router.port])) });
exitOnStop(async () => {
  delay.disable();
  await Promise.all(routers.map((router) => router.close()));
});
