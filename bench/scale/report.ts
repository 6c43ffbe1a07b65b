import { fixed, formatTable } from "../support/table.js";
import type { ScaleBenchResult } from "./scale-bench.js";

const MiB = 1024 * 1024;

/** The issue's targets (issue 26). */
export const SCALE_TARGETS = {
  changeToRoutedP99Ms: 250,
  syncRssMiB: 300,
  routerRssMiB: 1024,
  routerCpuGrowth: 2,
  workersCpuGrowth: 2,
  isolateHeapMiB: 64,
} as const;

const verdict = (met: boolean) => (met ? "met" : "missed");

/** The issue's lines, exactly in its shapes, then the targets and the figures behind them. */
export function formatScaleReport(result: ScaleBenchResult, changesPerSecond: number): string {
  const { sync, routers, workers } = result;
  const largestRouter = routers[routers.length - 1];
  const largestWorkers = workers[workers.length - 1];
  const lines = [
    `scale change->routed p99 (${sync.endpoints} endpoints, ${changesPerSecond} changes/s): ${fixed(sync.p99Ms, 1)} ms`,
    `scale sync rss (${sync.endpoints} endpoints): ${fixed(sync.memoryAtEnd.rssBytes / MiB, 0)} MiB`,
  ];
  if (largestRouter) {
    const clusters = largestRouter.clusters;
    lines.push(
      `scale router rss (${clusters} clusters, ${largestRouter.endpoints} endpoints): ${fixed(largestRouter.rssBytes / MiB, 0)} MiB`,
    );
  }
  for (const router of routers)
    lines.push(
      `scale router cpu per change (${router.services} services): ${fixed(router.cpuPerChangeMicros, 0)} us`,
    );
  for (const reader of workers)
    lines.push(
      `scale workers cpu per change (${reader.services} services): ${fixed(reader.cpuPerChangeMicros / 1000, 2)} ms`,
    );
  if (largestWorkers)
    lines.push(
      `scale workers isolate heap (${largestWorkers.services} services): ${fixed(largestWorkers.heapBytes / MiB, 1)} MiB`,
    );
  lines.push("", formatTable(["check", "measured", "target", "verdict"], targetRows(result)));
  lines.push(
    "",
    formatTable(
      ["router store", "services", "endpoints", "load ms", "RSS MiB", "cpu/change us", "cpu/request us"],
      routers.map((router) => [
        `${router.clusters} clusters`,
        String(router.services),
        String(router.endpoints),
        fixed(router.loadMs, 0),
        fixed(router.rssBytes / MiB, 0),
        fixed(router.cpuPerChangeMicros, 0),
        fixed(router.cpuPerRequestMicros, 0),
      ]),
    ),
    "",
    `Sync: ${sync.services} Services, ${sync.endpoints} endpoints visible to the reader ${fixed(sync.visibleMs / 1000, 1)} s after spawn; RSS after the first sync ${fixed(sync.memoryAfterSync.rssBytes / MiB, 0)} MiB (heap ${fixed(sync.memoryAfterSync.heapUsedBytes / MiB, 0)}), after the churn ${fixed(sync.memoryAtEnd.rssBytes / MiB, 0)} MiB, peak ${fixed(sync.memoryAtEnd.maxRssBytes / MiB, 0)} MiB; ${sync.observed}/${sync.changes} changes routed at ${fixed(sync.achievedRate, 0)}/s, p50 ${fixed(sync.p50Ms, 1)} ms, max ${fixed(sync.maxMs, 1)} ms.`,
    `Workers: ${workers.map((reader) => `${reader.services} Services: isolate heap ${fixed(reader.heapBytes / MiB, 1)} MiB`).join("; ")}.`,
    `Memory per endpoint (growth between the smallest and the largest store): router RSS ${fixed(
      perEndpoint(routers, (router) => router.rssBytes),
      0,
    )} B, Workers heap ${fixed(
      perEndpoint(workers, (reader) => reader.heapBytes),
      0,
    )} B.`,
  );
  return lines.join("\n");
}

/** Bytes each added endpoint costs, from the first to the last size: fixed costs (code, runtime) cancel out. */
function perEndpoint<T extends { readonly endpoints: number }>(
  sizes: readonly T[],
  bytesOf: (size: T) => number,
): number {
  const first = sizes[0];
  const last = sizes[sizes.length - 1];
  if (!first || !last || last.endpoints === first.endpoints) return Number.NaN;
  return (bytesOf(last) - bytesOf(first)) / (last.endpoints - first.endpoints);
}

function growth(values: readonly number[]): number {
  const first = values[0];
  const last = values[values.length - 1];
  return first !== undefined && last !== undefined && first > 0 ? last / first : Number.NaN;
}

function targetRows(result: ScaleBenchResult): string[][] {
  const { sync, routers, workers } = result;
  const rows: string[][] = [];
  const allRouted = sync.observed === sync.changes;
  rows.push([
    "change->routed p99",
    `${fixed(sync.p99Ms, 1)} ms${allRouted ? "" : ` (${sync.changes - sync.observed} never routed)`}`,
    `< ${SCALE_TARGETS.changeToRoutedP99Ms} ms`,
    verdict(allRouted && sync.p99Ms < SCALE_TARGETS.changeToRoutedP99Ms),
  ]);
  const syncMiB = sync.memoryAtEnd.rssBytes / MiB;
  rows.push([
    "sync rss",
    `${fixed(syncMiB, 0)} MiB`,
    `< ${SCALE_TARGETS.syncRssMiB} MiB`,
    verdict(syncMiB < SCALE_TARGETS.syncRssMiB),
  ]);
  const largest = routers[routers.length - 1];
  if (largest) {
    const routerMiB = largest.rssBytes / MiB;
    rows.push([
      `router rss (${largest.endpoints} endpoints)`,
      `${fixed(routerMiB, 0)} MiB`,
      `< ${SCALE_TARGETS.routerRssMiB} MiB`,
      verdict(routerMiB < SCALE_TARGETS.routerRssMiB),
    ]);
  }
  const routerGrowth = growth(routers.map((router) => router.cpuPerChangeMicros));
  rows.push([
    `router cpu per change, ${routers[routers.length - 1]?.services} / ${routers[0]?.services} services`,
    `${fixed(routerGrowth, 2)}x`,
    `<= ${SCALE_TARGETS.routerCpuGrowth}x`,
    verdict(routerGrowth <= SCALE_TARGETS.routerCpuGrowth),
  ]);
  const workersGrowth = growth(workers.map((reader) => reader.cpuPerChangeMicros));
  rows.push([
    `workers cpu per change, ${workers[workers.length - 1]?.services} / ${workers[0]?.services} services`,
    `${fixed(workersGrowth, 2)}x`,
    `<= ${SCALE_TARGETS.workersCpuGrowth}x`,
    verdict(workersGrowth <= SCALE_TARGETS.workersCpuGrowth),
  ]);
  const heap = workers[workers.length - 1];
  if (heap) {
    const heapMiB = heap.heapBytes / MiB;
    rows.push([
      `workers isolate heap (${heap.services} services)`,
      `${fixed(heapMiB, 1)} MiB`,
      `< ${SCALE_TARGETS.isolateHeapMiB} MiB`,
      verdict(heapMiB < SCALE_TARGETS.isolateHeapMiB),
    ]);
  }
  return rows;
}
