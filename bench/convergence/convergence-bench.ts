import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { silentLogger } from "../../lib/logger.js";
import { createRedisSnapshotSource, type RedisSnapshotSource } from "../../store/redis/source.js";
import { startFakeKube } from "../../test/fake-kube/server.js";
import { startPrivateRedis } from "../../test/support/redis.js";
import { startChild } from "../support/child.js";
import { fixed, formatTable, ratio, verdict } from "../support/table.js";
import {
  BENCH_NAMESPACE,
  changedAddress,
  initialAddress,
  serviceName,
  serviceObject,
  sliceObject,
} from "./objects.js";
import { commandCalls, commandDelta, totalCalls } from "./redis-commands.js";

const SYNC = fileURLToPath(new URL("./sync-process.ts", import.meta.url));
const CLUSTER = "bench";
const PREFIX = "edgeslice-bench";

export interface ConvergenceRun {
  readonly services: number;
  /** Shown in the table, e.g. "defaults" or "MAX_WAIT_MS=150". */
  readonly label: string;
  /** Extra sync environment for this run (tuning knobs). */
  readonly syncEnv?: Readonly<Record<string, string>>;
}

export interface ConvergenceOptions {
  /** One run each; sizes differ so Redis commands per change can be compared across them. */
  readonly runs: readonly ConvergenceRun[];
  readonly endpointsPerService: number;
  readonly changesPerSecond: number;
  readonly changeSeconds: number;
}

interface MemorySample {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly maxRssBytes: number;
}

export interface ConvergenceResult {
  readonly label: string;
  readonly services: number;
  readonly endpoints: number;
  /** Sync process: start → informers listed everything. */
  readonly listedMs: number;
  /** Sync process: start → every Service published. */
  readonly publishedMs: number;
  /** Parent: spawn of the sync process → the reader's snapshot holds every Service. */
  readonly visibleMs: number;
  readonly memoryAfterSync: MemorySample;
  readonly memoryAtEnd: MemorySample;
  readonly changes: number;
  readonly observed: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly achievedRate: number;
  readonly commandsPerChange: number;
  /** Commands of the sync's writer (MULTI/EXEC, HSET, XADD, heartbeat ...) per change. */
  readonly writerCommandsPerChange: number;
  /** Store writes (EXEC) per change: below 1 when the debounce coalesced changes. */
  readonly writesPerChange: number;
  readonly commandBreakdown: readonly [string, number][];
}

/** Commands only the sync writer sends (contract/keys.ts syncAclRules); the rest are the reader's. */
const WRITER_COMMANDS = new Set([
  "multi",
  "exec",
  "hset",
  "hdel",
  "xadd",
  "set",
  "pexpire",
  "del",
  "hgetall",
  "hget",
  "hkeys",
]);

export async function runConvergenceBench(
  options: ConvergenceOptions,
  log: (line: string) => void,
): Promise<ConvergenceResult[]> {
  const results: ConvergenceResult[] = [];
  for (const run of options.runs) {
    log(
      `  convergence with ${run.services} Services x ${options.endpointsPerService} endpoints (${run.label}) ...`,
    );
    results.push(await runOne(run, options, log));
  }
  return results;
}

async function runOne(
  run: ConvergenceRun,
  options: ConvergenceOptions,
  log: (line: string) => void,
): Promise<ConvergenceResult> {
  const { services } = run;
  const cleanups: (() => Promise<void>)[] = [];
  try {
    // A Redis of its own: INFO commandstats then counts only this run's commands.
    const redisServer = await startPrivateRedis();
    cleanups.unshift(() => redisServer.stop());
    const kube = await startFakeKube({ historyLimit: 100_000 });
    cleanups.unshift(() => kube.close());

    const addresses: string[][] = [];
    for (let i = 0; i < services; i++) {
      addresses.push(Array.from({ length: options.endpointsPerService }, (_, k) => initialAddress(i, k)));
      kube.apply(serviceObject(i));
      kube.apply(sliceObject(i, addresses[i] ?? []));
    }

    const readerRedis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    readerRedis.on("error", () => {});
    cleanups.unshift(async () => {
      readerRedis.disconnect();
    });
    const reader = createRedisSnapshotSource({
      redis: readerRedis,
      prefix: PREFIX,
      logger: silentLogger,
      now: Date.now,
      refreshIntervalMs: 200,
    });
    await reader.start();
    cleanups.unshift(() => reader.close());

    const spawnedAt = performance.now();
    const sync = startChild(SYNC, {
      env: {
        BENCH_KUBE_URL: kube.url,
        BENCH_KUBE_TOKEN: kube.token,
        CLUSTER_NAME: CLUSTER,
        REDIS_URL: redisServer.url,
        EDGESLICE_PREFIX: PREFIX,
        LEADER_ELECTION: "false",
        SYNC_PORT: "0",
        SYNC_HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        // 10 s of changes remove nothing: the valve must never hold one (no endpoint is lost per change).
        VALVE_HOLD_MS: "0",
        ...run.syncEnv,
      },
    });
    cleanups.unshift(() => sync.stop());
    const synced = await sync.next<{ listedMs: number; publishedMs: number; memory: MemorySample }>(
      "synced",
      180_000,
    );
    await waitFor(() => serviceCount(reader) >= services, 60_000, "the reader to see every Service");
    const visibleMs = performance.now() - spawnedAt;

    const before = await commandCalls(readerRedis);
    const latencies = await applyChanges(kube, reader, addresses, options);
    const after = await commandCalls(readerRedis);
    sync.send({ type: "memory" });
    const atEnd = await sync.next<{ memory: MemorySample }>("memory", 10_000);

    const delta = commandDelta(before, after);
    const changes = latencies.applied;
    const sorted = [...latencies.observedMs].sort((a, b) => a - b);
    log(`    ${latencies.observedMs.length}/${changes} changes observed`);
    let writerCalls = 0;
    for (const [command, calls] of delta) if (WRITER_COMMANDS.has(command)) writerCalls += calls;
    return {
      label: run.label,
      services,
      endpoints: services * options.endpointsPerService,
      listedMs: synced.listedMs,
      publishedMs: synced.publishedMs,
      visibleMs,
      memoryAfterSync: synced.memory,
      memoryAtEnd: atEnd.memory,
      changes,
      observed: sorted.length,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted[sorted.length - 1] ?? Number.NaN,
      achievedRate: latencies.achievedRate,
      commandsPerChange: changes > 0 ? totalCalls(delta) / changes : Number.NaN,
      writerCommandsPerChange: changes > 0 ? writerCalls / changes : Number.NaN,
      writesPerChange: changes > 0 ? (delta.get("exec") ?? 0) / changes : Number.NaN,
      commandBreakdown: [...delta.entries()].sort((a, b) => b[1] - a[1]),
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
  }
}

interface ChangeTimings {
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
async function applyChanges(
  kube: Awaited<ReturnType<typeof startFakeKube>>,
  reader: RedisSnapshotSource,
  addresses: string[][],
  options: ConvergenceOptions,
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
    const services = snapshot.clusters.find((c) => c.name === CLUSTER)?.services;
    for (const [service, changes] of pending) {
      const ips = new Set(services?.get(service)?.ipv4.endpoints.map((e) => e.ip));
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

function serviceCount(reader: RedisSnapshotSource): number {
  return reader.current()?.clusters.find((c) => c.name === CLUSTER)?.services.size ?? 0;
}

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(2);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

const MiB = 1024 * 1024;

export function formatConvergenceReport(
  results: readonly ConvergenceResult[],
  options: ConvergenceOptions,
): string {
  const lines = [
    `Convergence: fake API server → real sync process (client-node informers, reconciler, Redis writer) → private redis-server → real Redis reader; ${options.changesPerSecond} slice changes/s for ${options.changeSeconds} s, each replacing one endpoint address.`,
    formatTable(
      [
        "run",
        "services",
        "endpoints",
        "listed ms",
        "published ms",
        "visible ms",
        "sync RSS MiB",
        "sync heap MiB",
        "sync peak RSS MiB",
        "changes (seen)",
        "rate/s",
        "p50 ms",
        "p99 ms",
        "max ms",
        "redis cmds/change (writer)",
        "writes/change",
      ],
      results.map((r) => [
        r.label,
        String(r.services),
        String(r.endpoints),
        fixed(r.listedMs, 0),
        fixed(r.publishedMs, 0),
        fixed(r.visibleMs, 0),
        fixed(r.memoryAfterSync.rssBytes / MiB, 1),
        fixed(r.memoryAfterSync.heapUsedBytes / MiB, 1),
        fixed(r.memoryAtEnd.maxRssBytes / MiB, 1),
        `${r.changes} (${r.observed})`,
        fixed(r.achievedRate, 0),
        fixed(r.p50Ms, 1),
        fixed(r.p99Ms, 1),
        fixed(r.maxMs, 1),
        `${fixed(r.commandsPerChange, 2)} (${fixed(r.writerCommandsPerChange, 2)})`,
        fixed(r.writesPerChange, 2),
      ]),
    ),
    "",
    "listed = sync start → informers hold every object; published = → every Service written; visible = sync process spawn → the reader's snapshot holds every Service (includes Node/tsx start-up).",
    "",
  ];
  for (const r of results) {
    lines.push(
      `Redis commands per change, ${r.services} Services (${r.label}), writer + reader + timers: ` +
        r.commandBreakdown
          .map(([command, calls]) => `${command} ${fixed(calls / Math.max(1, r.changes), 2)}`)
          .join(", "),
    );
  }
  const defaults = results.filter((r) => r.label === results[0]?.label);
  const smallest = defaults[0];
  const largest = defaults[defaults.length - 1];
  const lost = results.reduce((sum, r) => sum + (r.changes - r.observed), 0);
  lines.push(
    "",
    formatTable(
      ["check", "measured", "target", "ratio", "verdict"],
      [
        ...results.map((r) => [
          `change → reader p99, ${r.services} Services (${r.label})`,
          `${fixed(r.p99Ms, 1)} ms`,
          "< 250 ms",
          ratio(r.p99Ms, 250),
          verdict(r.p99Ms < 250),
        ]),
        ...(smallest && largest && smallest !== largest
          ? [
              [
                `writer cmds/write ${largest.services} vs ${smallest.services} Services`,
                `${fixed(largest.writerCommandsPerChange / largest.writesPerChange, 2)} vs ${fixed(smallest.writerCommandsPerChange / smallest.writesPerChange, 2)}`,
                "no growth (ratio ~1x)",
                ratio(
                  largest.writerCommandsPerChange / largest.writesPerChange,
                  smallest.writerCommandsPerChange / smallest.writesPerChange,
                ),
                verdict(
                  largest.writerCommandsPerChange / largest.writesPerChange <=
                    (smallest.writerCommandsPerChange / smallest.writesPerChange) * 1.2,
                ),
              ],
              [
                `all cmds/change ${largest.services} vs ${smallest.services} Services`,
                `${fixed(largest.commandsPerChange, 2)} vs ${fixed(smallest.commandsPerChange, 2)}`,
                "no growth (ratio ~1x)",
                ratio(largest.commandsPerChange, smallest.commandsPerChange),
                verdict(largest.commandsPerChange <= smallest.commandsPerChange * 1.2),
              ],
            ]
          : []),
        ["changes never seen by the reader", String(lost), "0", "", verdict(lost === 0)],
      ],
    ),
  );
  return lines.join("\n");
}
