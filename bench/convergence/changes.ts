import { sleep } from "../../lib/async.js";
import type { RedisSnapshotSource } from "../../store/redis/source.js";
import type { FakeKube } from "../../test/fake-kube/server.js";
import { BENCH_NAMESPACE, changedAddress, serviceName, sliceObject } from "./objects.js";

export interface ChangePace {
  readonly changesPerSecond: number;
  readonly changeSeconds: number;
}

export interface ChangeTimings {
  readonly applied: number;
  readonly observedMs: number[];
  readonly achievedRate: number;
}

/**
 * Paced changes, round-robin over Services: each replaces endpoint 0 of one slice with a fresh address. A change
 * has converged when the reader's snapshot holds its address, or the address of a later change to the same
 * Service (the store moved past it: with the debounce, several changes to one Service may land in one write).
 * Checked every millisecond, only when the snapshot version moved.
 */
export async function applyChanges(
  kube: FakeKube,
  reader: RedisSnapshotSource,
  cluster: string,
  addresses: string[][],
  options: ChangePace,
): Promise<ChangeTimings> {
  const total = Math.round(options.changesPerSecond * options.changeSeconds);
  const intervalMs = 1000 / options.changesPerSecond;
  /** Per Service, its not yet converged changes in the order they were made. */
  const pending = new Map<string, { ip: string; at: number }[]>();
  let pendingCount = 0;
  const observedMs: number[] = [];
  let lastVersion = -1;
  const check = () => {
    const snapshot = reader.current();
    if (!snapshot || snapshot.version === lastVersion) return;
    lastVersion = snapshot.version;
    const now = performance.now();
    // Every schema version as routers read it (servicesV2): a sync writes v2, one port per referenced port.
    const services = snapshot.clusters.find((c) => c.name === cluster)?.servicesV2;
    for (const [service, changes] of pending) {
      const ports = services?.get(service)?.ports ?? [];
      const ips = new Set(ports.flatMap((port) => port.ipv4.endpoints.map((e) => e.ip)));
      let newest = -1;
      changes.forEach((change, index) => {
        if (ips.has(change.ip)) newest = index;
      });
      if (newest < 0) continue;
      for (const change of changes.splice(0, newest + 1)) observedMs.push(now - change.at);
      pendingCount -= newest + 1;
      if (changes.length === 0) pending.delete(service);
    }
  };
  const started = performance.now();
  for (let change = 0; change < total; change++) {
    const due = started + change * intervalMs;
    while (performance.now() < due) {
      check();
      await sleep(1);
    }
    const index = change % addresses.length;
    const list = addresses[index];
    if (!list) continue;
    const ip = changedAddress(change);
    list[0] = ip;
    const service = `${BENCH_NAMESPACE}/${serviceName(index)}`;
    const queue = pending.get(service) ?? [];
    queue.push({ ip, at: performance.now() });
    pending.set(service, queue);
    pendingCount++;
    kube.apply(sliceObject(index, list));
  }
  const achievedRate = total / ((performance.now() - started) / 1000);
  const deadline = performance.now() + 15_000;
  while (pendingCount > 0 && performance.now() < deadline) {
    check();
    await sleep(1);
  }
  return { applied: total, observedMs, achievedRate };
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
