import { routeIndexOf } from "../../functions/core/route-index.js";
import { sleep } from "../../lib/async.js";
import type { RedisSnapshotSource } from "../../store/redis/source.js";
import type { FakeKube } from "../../test/fake-kube/server.js";
import type { SyncWorkload } from "./sync-workload.js";

export interface ChurnPace {
  readonly changesPerSecond: number;
  readonly changeSeconds: number;
}

export interface ChurnTimings {
  readonly applied: number;
  /** apply() at the API server → a router-side snapshot holding the change with its route index built. */
  readonly observedMs: number[];
  readonly achievedRate: number;
}

/**
 * Paced slice changes. A change is routed once the reader's snapshot holds its address (or a later one of the
 * same Service: the debounce may fold several into one write) and the route index of that snapshot is built,
 * which the router does on the first request after a snapshot, so its cost is part of the latency.
 */
export async function applyChurn(
  kube: FakeKube,
  reader: RedisSnapshotSource,
  cluster: string,
  workload: SyncWorkload,
  pace: ChurnPace,
): Promise<ChurnTimings> {
  const total = Math.round(pace.changesPerSecond * pace.changeSeconds);
  const intervalMs = 1000 / pace.changesPerSecond;
  const pending = new Map<string, { address: string; at: number }[]>();
  let pendingCount = 0;
  const observedMs: number[] = [];
  let lastVersion = -1;
  const check = () => {
    const snapshot = reader.current();
    if (!snapshot || snapshot.version === lastVersion) return;
    lastVersion = snapshot.version;
    routeIndexOf(snapshot);
    const now = performance.now();
    const services = snapshot.clusters.find((c) => c.name === cluster)?.servicesV2;
    for (const [service, changes] of pending) {
      const ports = services?.get(service)?.ports ?? [];
      const held = new Set(ports.flatMap((port) => port.ipv4.endpoints.map((e) => e.ip)));
      let newest = -1;
      changes.forEach((change, index) => {
        if (held.has(change.address)) newest = index;
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
    const at = performance.now();
    const made = workload.changeNext(kube);
    const queue = pending.get(made.service) ?? [];
    queue.push({ address: made.address, at });
    pending.set(made.service, queue);
    pendingCount++;
  }
  const achievedRate = total / ((performance.now() - started) / 1000);
  const deadline = performance.now() + 20_000;
  while (pendingCount > 0 && performance.now() < deadline) {
    check();
    await sleep(1);
  }
  return { applied: total, observedMs, achievedRate };
}
