import { sleep } from "../../lib/async.js";
import type { Snapshot } from "../../store/store.js";

export interface ChangePace {
  readonly changesPerSecond: number;
  readonly changeSeconds: number;
}

export interface ChangeTimings {
  readonly applied: number;
  /** Each change: made → a reader's snapshot holding it. */
  readonly observedMs: number[];
  readonly achievedRate: number;
}

/** One change made: the Service (`ns/name`, as the store names it) and the address it now holds. */
export interface ChangeMade {
  readonly service: string;
  readonly address: string;
}

export interface PacedChangesOptions extends ChangePace {
  /** The reader's view of the store (a RedisSnapshotSource's current()). */
  readonly current: () => Snapshot | undefined;
  readonly cluster: string;
  /** Makes change number `change` and says what it changed. */
  readonly make: (change: number) => ChangeMade;
  /** Run on each new snapshot before it is checked (e.g. building its route index, part of the latency). */
  readonly onSnapshot?: (snapshot: Snapshot) => void;
  /** How long to wait for the last changes after the paced ones. */
  readonly drainMs: number;
}

/**
 * Paced changes, each timed from the moment it is made until the reader's snapshot holds its address, or the
 * address of a later change to the same Service (the store moved past it: a debounce may fold several changes
 * to one Service into one write). Checked every millisecond, only when the snapshot version moved. Shared by
 * the convergence and scale benches.
 */
export async function applyPacedChanges(options: PacedChangesOptions): Promise<ChangeTimings> {
  const total = Math.round(options.changesPerSecond * options.changeSeconds);
  const intervalMs = 1000 / options.changesPerSecond;
  /** Per Service, its changes not yet seen, in the order they were made. */
  const pending = new Map<string, { address: string; at: number }[]>();
  let pendingCount = 0;
  const observedMs: number[] = [];
  let lastVersion = -1;
  const check = () => {
    const snapshot = options.current();
    if (!snapshot || snapshot.version === lastVersion) return;
    lastVersion = snapshot.version;
    options.onSnapshot?.(snapshot);
    const now = performance.now();
    // Every schema version as routers read it (servicesV2): a sync writes v2, one port per referenced port.
    const services = snapshot.clusters.find((c) => c.name === options.cluster)?.servicesV2;
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
    const made = options.make(change);
    const queue = pending.get(made.service) ?? [];
    queue.push({ address: made.address, at });
    pending.set(made.service, queue);
    pendingCount++;
  }
  const achievedRate = total / ((performance.now() - started) / 1000);
  const deadline = performance.now() + options.drainMs;
  while (pendingCount > 0 && performance.now() < deadline) {
    check();
    await sleep(1);
  }
  return { applied: total, observedMs, achievedRate };
}
