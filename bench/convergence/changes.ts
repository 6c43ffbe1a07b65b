import { sleep } from "../../lib/async.js";
import type { RedisSnapshotSource } from "../../store/redis/source.js";
import type { FakeKube } from "../../test/fake-kube/server.js";
import { applyPacedChanges, type ChangePace, type ChangeTimings } from "../support/paced-changes.js";
import { BENCH_NAMESPACE, changedAddress, serviceName, sliceObject } from "./objects.js";

export type { ChangePace, ChangeTimings } from "../support/paced-changes.js";

/**
 * Paced changes, round-robin over Services: each replaces endpoint 0 of one slice with a fresh address, timed
 * until the reader holds it (bench/support/paced-changes.ts).
 */
export async function applyChanges(
  kube: FakeKube,
  reader: RedisSnapshotSource,
  cluster: string,
  addresses: string[][],
  options: ChangePace,
): Promise<ChangeTimings> {
  return applyPacedChanges({
    ...options,
    current: () => reader.current(),
    cluster,
    drainMs: 15_000,
    make: (change) => {
      const index = change % addresses.length;
      const list = addresses[index] ?? [];
      const address = changedAddress(change);
      list[0] = address;
      kube.apply(sliceObject(index, list));
      return { service: `${BENCH_NAMESPACE}/${serviceName(index)}`, address };
    },
  });
}

export function serviceCount(reader: RedisSnapshotSource, cluster: string): number {
  return reader.current()?.clusters.find((c) => c.name === cluster)?.servicesV2.size ?? 0;
}

export async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(2);
  }
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}
