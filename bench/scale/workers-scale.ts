import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createDeltaStoreReader } from "../workers/delta-store-reader.js";
import { median } from "../workers/workers-bench.js";
import type { ScaleStore } from "./store-fixture.js";

export interface WorkersScaleOptions {
  readonly redisUrl: string;
  readonly store: ScaleStore;
  /** Changes measured; the figure is their median. */
  readonly changes: number;
}

export interface WorkersScaleResult {
  readonly services: number;
  readonly endpoints: number;
  /** Median process CPU of one refresh after one change, with one request routed after it. */
  readonly cpuPerChangeMicros: number;
  /** JS heap the isolate's view of the store holds after a full GC, over the heap before the reader existed. */
  readonly heapBytes: number;
}

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

function heapUsedAfterGc(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/**
 * The shipped Workers source (bench/workers/delta-store-reader.ts over functions/workers/delta-source.ts) in
 * this Node process: a cold request for one host and what it reads after the response, then refreshes that
 * each follow one written change. Node's heap stands in for an isolate's; the modules both load are not in the
 * figure, only what the reader keeps.
 */
export async function runWorkersScale(options: WorkersScaleOptions): Promise<WorkersScaleResult> {
  const { store } = options;
  const heapBefore = heapUsedAfterGc();
  const reader = createDeltaStoreReader({ url: options.redisUrl, prefix: store.prefix });
  await reader.coldRequest(store.hostOf(0, 0));
  await reader.settle?.();
  for (let i = 0; i < 3; i++) await reader.refresh();
  const samples: number[] = [];
  for (let i = 0; i < options.changes; i++) {
    const index = (i * 7919 + 1) % store.servicesPerCluster;
    const address = await store.changeOne(0, index);
    const host = store.hostOf(0, index);
    const before = process.cpuUsage();
    await reader.refresh();
    const routed = reader.addressesOf(host);
    const used = process.cpuUsage(before);
    if (!routed?.includes(address)) throw new Error(`the refresh missed ${address} of ${host}`);
    samples.push(used.user + used.system);
  }
  const heapBytes = heapUsedAfterGc() - heapBefore;
  // The reader stays reachable until the heap is measured.
  if (reader.addressesOf(store.hostOf(0, 0)) === undefined) throw new Error("the reader lost its view");
  return {
    services: store.services,
    endpoints: store.endpoints,
    cpuPerChangeMicros: median(samples),
    heapBytes,
  };
}
