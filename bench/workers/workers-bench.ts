import { Redis } from "ioredis";
import { clusterKeys } from "../../store/keys.js";
import { decodeStoredService } from "../../store/stored-records.js";
import { startPrivateRedis } from "../../test/support/redis.js";
import { type CountingProxy, startCountingProxy, type WireCounts } from "./counting-proxy.js";
import { createDeltaStoreReader } from "./delta-store-reader.js";
import type { WorkersReaderColumn, WorkersStoreReader, WorkersStoreTarget } from "./reader.js";
import { BENCH_CLUSTER, type BenchStore, writeBenchStore } from "./store-fixture.js";
import { createWholeStoreReader } from "./whole-store-reader.js";

/** The columns side by side: the reload Workers did before (the baseline) and the delta reader it ships. */
export const WORKERS_READERS: readonly WorkersReaderColumn[] = [
  { name: "whole-store reload", create: createWholeStoreReader },
  { name: "delta", create: createDeltaStoreReader },
];

const PREFIX = "edgeslice-bench";

export interface WorkersBenchOptions {
  /** Services in the store, one run each. */
  readonly sizes: readonly number[];
  readonly endpointsPerService: number;
  /** Runs behind each CPU and wall-time figure (their median). */
  readonly cpuRuns: number;
  readonly readers: readonly WorkersReaderColumn[];
}

export const WORKERS_OPERATIONS = ["refresh-unchanged", "refresh-one-change", "cold-request"] as const;
export type WorkersOperation = (typeof WORKERS_OPERATIONS)[number];

export interface OperationFigures {
  /** Through the counting proxy, one run (the wire is deterministic for a given store). */
  readonly wire: WireCounts;
  /** Median process CPU (user + system) of the operation on a direct connection, µs. */
  readonly cpuMicros: number;
  /** Median wall time on loopback, ms: no network latency in it, so only a lower bound. */
  readonly wallMs: number;
}

export interface ReaderFigures {
  readonly reader: string;
  /** Undefined for a column whose reader does not exist yet. */
  readonly operations: Readonly<Record<WorkersOperation, OperationFigures>> | undefined;
  /** What the reader read after the cold response (`waitUntil`), when it defers anything. */
  readonly afterCold?: WireCounts | undefined;
}

export interface WorkersSizeResult {
  readonly services: number;
  readonly endpoints: number;
  /** The serialised records of the cluster, summed: what one HGETALL of them carries, before framing. */
  readonly recordBytes: number;
  /** Median time to decode (JSON.parse + schema) every record once, as each whole-store reload does, ms. */
  readonly decodeMs: number;
  readonly readers: readonly ReaderFigures[];
}

export async function runWorkersBench(
  options: WorkersBenchOptions,
  log: (line: string) => void,
): Promise<WorkersSizeResult[]> {
  const redisServer = await startPrivateRedis();
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  const proxy = await startCountingProxy(redisServer.port);
  try {
    const results: WorkersSizeResult[] = [];
    for (const services of options.sizes) {
      await redis.flushall();
      log(`workers bench: writing ${services} Services of ${options.endpointsPerService} endpoints ...`);
      const store = await writeBenchStore(redis, PREFIX, services, options.endpointsPerService);
      const readers: ReaderFigures[] = [];
      for (const column of options.readers) {
        if (!column.create) {
          readers.push({ reader: column.name, operations: undefined });
          continue;
        }
        log(`workers bench: ${column.name}, ${services} Services ...`);
        const direct = { url: redisServer.url, prefix: PREFIX };
        const { afterCold, ...wire } = await measureWire(
          column.create,
          { url: proxy.url, prefix: PREFIX },
          proxy,
          store,
        );
        const timing = await measureCpu(column.create, direct, store, options.cpuRuns);
        const operations = Object.fromEntries(
          WORKERS_OPERATIONS.map((operation) => [operation, { wire: wire[operation], ...timing[operation] }]),
        ) as Record<WorkersOperation, OperationFigures>;
        readers.push({ reader: column.name, operations, afterCold });
      }
      const raw = await redis.hgetall(clusterKeys(PREFIX, BENCH_CLUSTER).services);
      results.push({
        services,
        endpoints: services * options.endpointsPerService,
        recordBytes: Object.values(raw).reduce((sum, value) => sum + Buffer.byteLength(value), 0),
        decodeMs: decodeMedianMs(Object.entries(raw), options.cpuRuns),
        readers,
      });
    }
    return results;
  } finally {
    await proxy.close();
    redis.disconnect();
    await redisServer.stop();
  }
}

/** The Service a cold request asks for, and the one a change touches: neither the first nor the last. */
const coldIndex = (store: BenchStore) => Math.floor(store.services / 3);
const changeIndex = (store: BenchStore) => Math.floor((2 * store.services) / 3);

async function measureWire(
  create: (target: WorkersStoreTarget) => WorkersStoreReader,
  target: WorkersStoreTarget,
  proxy: CountingProxy,
  store: BenchStore,
): Promise<Record<WorkersOperation, WireCounts> & { afterCold: WireCounts | undefined }> {
  const reader = create(target);
  proxy.take();
  await reader.coldRequest(store.hostOf(coldIndex(store)));
  const cold = proxy.take().counts;
  let afterCold: WireCounts | undefined;
  if (reader.settle) {
    await reader.settle();
    afterCold = proxy.take().counts;
  }
  await reader.refresh();
  const unchanged = proxy.take().counts;
  expectRoutable(reader, store, coldIndex(store));
  const address = await store.changeOne(changeIndex(store));
  proxy.take();
  await reader.refresh();
  const oneChange = proxy.take().counts;
  expectChangeSeen(reader, store, address);
  return { "refresh-unchanged": unchanged, "refresh-one-change": oneChange, "cold-request": cold, afterCold };
}

async function measureCpu(
  create: (target: WorkersStoreTarget) => WorkersStoreReader,
  target: WorkersStoreTarget,
  store: BenchStore,
  runs: number,
): Promise<Record<WorkersOperation, { cpuMicros: number; wallMs: number }>> {
  const coldHost = store.hostOf(coldIndex(store));
  const changedHost = store.hostOf(changeIndex(store));
  const cold: Sample[] = [];
  let reader: WorkersStoreReader | undefined;
  for (let run = 0; run < runs; run++) {
    const fresh = create(target);
    cold.push(await sample(() => fresh.coldRequest(coldHost)));
    await fresh.settle?.();
    reader = fresh;
  }
  if (!reader) throw new Error("cpuRuns must be at least 1");
  const warm = reader;
  // Warm-up: the first refreshes of a reader are not what it does every TTL.
  for (let run = 0; run < 2; run++) await warm.refresh();
  const unchanged: Sample[] = [];
  for (let run = 0; run < runs; run++) {
    unchanged.push(await sample(() => warm.refresh().then(() => warm.addressesOf(coldHost))));
  }
  const oneChange: Sample[] = [];
  for (let run = 0; run < runs; run++) {
    const address = await store.changeOne(changeIndex(store));
    oneChange.push(await sample(() => warm.refresh().then(() => warm.addressesOf(changedHost))));
    expectChangeSeen(warm, store, address);
  }
  return {
    "refresh-unchanged": medianOf(unchanged),
    "refresh-one-change": medianOf(oneChange),
    "cold-request": medianOf(cold),
  };
}

interface Sample {
  readonly cpuMicros: number;
  readonly wallMs: number;
}

async function sample(operation: () => Promise<unknown>): Promise<Sample> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await operation();
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { cpuMicros: cpu.user + cpu.system, wallMs };
}

function medianOf(samples: readonly Sample[]): Sample {
  return { cpuMicros: median(samples.map((s) => s.cpuMicros)), wallMs: median(samples.map((s) => s.wallMs)) };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  if (sorted.length % 2 === 1) return sorted[middle] ?? Number.NaN;
  return ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function decodeMedianMs(raws: readonly [string, string][], runs: number): number {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    for (const [service, raw] of raws) {
      if (!decodeStoredService(BENCH_CLUSTER, service, raw))
        throw new Error("a bench record does not decode");
    }
    times.push(performance.now() - started);
  }
  return median(times);
}

function expectRoutable(reader: WorkersStoreReader, store: BenchStore, index: number): void {
  if (!reader.addressesOf(store.hostOf(index))?.length)
    throw new Error(`the reader cannot route ${store.hostOf(index)}`);
}

function expectChangeSeen(reader: WorkersStoreReader, store: BenchStore, address: string): void {
  const host = store.hostOf(changeIndex(store));
  if (!reader.addressesOf(host)?.includes(address))
    throw new Error(`after a refresh the reader still misses ${address} of ${host}`);
}
