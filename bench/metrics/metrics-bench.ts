import { request } from "node:http";
import { fileURLToPath } from "node:url";
import type { BackendSeries } from "../../functions/core/observability/backend-metrics.js";
import { startChild } from "../support/child.js";
import type { MetricsStoreSize } from "./store-fixture.js";

/**
 * `/_edgeslice/metrics` scraped over loopback from a router process holding a store of each size: the time to the
 * body's last byte, its size, and the longest the router's event loop was held meanwhile (its own
 * monitorEventLoopDelay at 1 ms resolution, so an idle loop reads about 1 ms). One scrape warms up, then
 * `scrapes` are measured: the median time and the worst delay are reported.
 */
export interface MetricsBenchOptions {
  readonly sizes: readonly MetricsStoreSize[];
  /** METRICS_BACKENDS values measured at the largest size (every size is measured with `service`). */
  readonly settingsAtLargest: readonly BackendSeries[];
  readonly scrapes: number;
}

export interface ScrapeFigures {
  readonly size: MetricsStoreSize;
  readonly series: BackendSeries;
  readonly ms: number;
  readonly bytes: number;
  readonly maxDelayMs: number;
  /** The worst scrape's 99th percentile of the loop's delay samples (1 ms apart). */
  readonly p99DelayMs: number;
  /** The most CPU the router used between two 1 ms timer ticks in any measured scrape (router-process.ts). */
  readonly busiestMs: number;
  /** The ready endpoints the scrape counted (a check that the store holds what it should). */
  readonly readyEndpoints: number | undefined;
}

export interface MetricsSizeResult {
  readonly size: MetricsStoreSize;
  readonly scrapes: readonly ScrapeFigures[];
  /** The same exposition rendered in one go on the router's loop, as before it was sliced. */
  readonly renderAtOnceMs: number;
}

const ROUTER_SCRIPT = fileURLToPath(new URL("./router-process.ts", import.meta.url));

export async function runMetricsBench(
  options: MetricsBenchOptions,
  log: (line: string) => void,
): Promise<MetricsSizeResult[]> {
  const results: MetricsSizeResult[] = [];
  const largest = options.sizes.at(-1);
  for (const size of options.sizes) {
    log(`metrics: ${size.clusters} clusters × ${size.services} Services × ${size.endpoints} endpoints ...`);
    const router = startChild(ROUTER_SCRIPT, {
      env: {
        BENCH_CLUSTERS: String(size.clusters),
        BENCH_SERVICES: String(size.services),
        BENCH_ENDPOINTS: String(size.endpoints),
      },
    });
    try {
      const { ports } = await router.next<{ ports: Record<BackendSeries, number> }>("ready", 600_000);
      const settings: BackendSeries[] =
        size === largest ? ["service", ...options.settingsAtLargest] : ["service"];
      const scrapes: ScrapeFigures[] = [];
      for (const series of settings) {
        const port = ports[series];
        await scrape(port);
        const measured: {
          ms: number;
          bytes: number;
          maxDelayMs: number;
          p99DelayMs: number;
          busiestMs: number;
          text: string;
        }[] = [];
        for (let i = 0; i < options.scrapes; i++) {
          router.send({ type: "arm" });
          await router.next("armed", 10_000);
          const figures = await scrape(port);
          router.send({ type: "read" });
          const delay = await router.next<{ maxMs: number; p99Ms: number; busiestMs: number }>(
            "delay",
            10_000,
          );
          measured.push({
            ...figures,
            maxDelayMs: delay.maxMs,
            p99DelayMs: delay.p99Ms,
            busiestMs: delay.busiestMs,
          });
        }
        const times = measured.map((m) => m.ms).sort((a, b) => a - b);
        const last = measured.at(-1);
        scrapes.push({
          size,
          series,
          ms: times[Math.floor(times.length / 2)] ?? Number.NaN,
          bytes: last?.bytes ?? 0,
          maxDelayMs: Math.max(...measured.map((m) => m.maxDelayMs)),
          p99DelayMs: Math.max(...measured.map((m) => m.p99DelayMs)),
          busiestMs: Math.max(...measured.map((m) => m.busiestMs)),
          readyEndpoints: series === "none" ? undefined : readyIn(last?.text ?? ""),
        });
      }
      router.send({ type: "render-at-once" });
      const { ms } = await router.next<{ ms: number }>("rendered", 120_000);
      results.push({ size, scrapes, renderAtOnceMs: ms });
    } finally {
      await router.stop();
    }
  }
  return results;
}

/** One scrape on a fresh connection: wall time to the last byte, and the body. */
function scrape(port: number): Promise<{ ms: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/_edgeslice/metrics",
        headers: { authorization: "Bearer bench" },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const body = Buffer.concat(chunks);
          if (res.statusCode !== 200) reject(new Error(`scrape answered ${res.statusCode}`));
          else resolve({ ms: performance.now() - started, bytes: body.length, text: body.toString("utf8") });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

function readyIn(text: string): number {
  let total = 0;
  for (const match of text.matchAll(/^edgeslice_backends\{[^}]*state="ready"\} (\d+)$/gm))
    total += Number(match[1]);
  return total;
}
