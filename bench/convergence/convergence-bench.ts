import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { silentLogger } from "../../lib/logger.js";
import { createRedisSnapshotSource } from "../../store/redis/source.js";
import { startFakeKube } from "../../test/fake-kube/server.js";
import { freePort, startPrivateRedis } from "../../test/support/redis.js";
import { fixed, formatTable } from "../support/table.js";
import { applyChanges, percentile, serviceCount, waitFor } from "./changes.js";
import { initialAddress, serviceObject, sliceObject } from "./objects.js";
import { commandCalls, commandDelta, totalCalls } from "./redis-commands.js";
import { checkRows } from "./report.js";
import {
  buildSync,
  type MemorySample,
  type SyncRunner,
  startSyncProcess,
  syncRunnerFromEnv,
  writeKubeconfig,
} from "./sync-process.js";

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

export interface ConvergenceResult {
  readonly label: string;
  readonly services: number;
  readonly endpoints: number;
  /** How the sync ran: `node dist/sync.js` (built) or `node --import tsx sync/main.ts`. */
  readonly runner: SyncRunner;
  /** Spawn of the sync process → its /healthz answers (modules loaded, health server up). */
  readonly startedMs: number;
  /** Spawn → /readyz answers 200: the informers listed everything and Redis is connected. */
  readonly readyMs: number;
  /** Spawn → the reader's snapshot holds every Service: the first full sync, end to end. */
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

/**
 * Commands only the sync writer sends (store/acl.ts syncAclRules); the rest are the reader's. Each write is one
 * EVALSHA whose script's own commands (the fence GET/SET, HSET, XADD...) Redis counts as well.
 */
const WRITER_COMMANDS = new Set([
  "evalsha",
  "eval",
  "get",
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
  const runner = syncRunnerFromEnv();
  if (runner === "built") {
    log("  npm run build (the convergence bench runs node dist/sync.js; BENCH_SYNC_RUNNER=tsx runs tsx) ...");
    await buildSync();
  }
  const results: ConvergenceResult[] = [];
  for (const run of options.runs) {
    log(
      `  convergence with ${run.services} Services x ${options.endpointsPerService} endpoints (${run.label}) ...`,
    );
    results.push(await runOne(run, runner, options, log));
  }
  return results;
}

async function runOne(
  run: ConvergenceRun,
  runner: SyncRunner,
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

    const dir = await mkdtemp(join(tmpdir(), "edgeslice-bench-"));
    cleanups.unshift(() => rm(dir, { recursive: true, force: true }));
    const syncPort = await freePort();
    const sync = startSyncProcess({
      runner,
      syncPort,
      env: {
        KUBECONFIG: await writeKubeconfig(dir, kube.kubeConfig().exportConfig()),
        CLUSTER_NAME: CLUSTER,
        REDIS_URL: redisServer.url,
        EDGESLICE_PREFIX: PREFIX,
        LEADER_ELECTION: "false",
        SYNC_PORT: String(syncPort),
        SYNC_HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        // 10 s of changes remove nothing: the valve must never hold one (no endpoint is lost per change).
        VALVE_HOLD_MS: "0",
        ...run.syncEnv,
      },
    });
    cleanups.unshift(() => sync.stop());
    const startedMs = await sync.until("/healthz", 60_000);
    const readyMs = await sync.until("/readyz", 180_000);
    await waitFor(() => serviceCount(reader, CLUSTER) >= services, 60_000, "the reader to see every Service");
    const visibleMs = sync.sinceSpawnMs();
    const memoryAfterSync = await sync.memory();
    const snapshotDir = process.env.BENCH_HEAP_SNAPSHOT_DIR;
    if (snapshotDir) log(`    heap snapshot: ${await sync.heapSnapshot(snapshotDir)}`);

    const before = await commandCalls(readerRedis);
    const latencies = await applyChanges(kube, reader, CLUSTER, addresses, options);
    const after = await commandCalls(readerRedis);
    const memoryAtEnd = await sync.memory();

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
      runner,
      startedMs,
      readyMs,
      visibleMs,
      memoryAfterSync,
      memoryAtEnd,
      changes,
      observed: sorted.length,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted[sorted.length - 1] ?? Number.NaN,
      achievedRate: latencies.achievedRate,
      commandsPerChange: changes > 0 ? totalCalls(delta) / changes : Number.NaN,
      writerCommandsPerChange: changes > 0 ? writerCalls / changes : Number.NaN,
      // One script per write and per heartbeat (store/redis/writer.ts), as one MULTI/EXEC each before.
      writesPerChange:
        changes > 0
          ? ((delta.get("evalsha") ?? 0) + (delta.get("eval") ?? 0) + (delta.get("exec") ?? 0)) / changes
          : Number.NaN,
      commandBreakdown: [...delta.entries()].sort((a, b) => b[1] - a[1]),
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
  }
}

const MiB = 1024 * 1024;

export function formatConvergenceReport(
  results: readonly ConvergenceResult[],
  options: ConvergenceOptions,
): string {
  const runner = results[0]?.runner === "tsx" ? "node --import tsx sync/main.ts" : "node dist/sync.js";
  const lines = [
    `Convergence: fake API server → real sync process (${runner}: reflectors, reconciler, Redis writer) → private redis-server → real Redis reader; ${options.changesPerSecond} slice changes/s for ${options.changeSeconds} s, each replacing one endpoint address.`,
    formatTable(
      [
        "run",
        "services",
        "endpoints",
        "started ms",
        "ready ms",
        "visible ms",
        "sync RSS MiB",
        "anon / file",
        "heap MiB",
        "peak RSS MiB",
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
        fixed(r.startedMs, 0),
        fixed(r.readyMs, 0),
        fixed(r.visibleMs, 0),
        fixed(r.memoryAfterSync.rssBytes / MiB, 1),
        `${fixed(r.memoryAfterSync.rssAnonBytes / MiB, 0)} / ${fixed(r.memoryAfterSync.rssFileBytes / MiB, 0)}`,
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
    "From the spawn of the sync process: started = its /healthz answers (modules loaded); ready = /readyz answers (informers listed everything, Redis connected); visible = the reader's snapshot holds every Service (the first full sync, end to end). Memory right after the first full sync: RSS, of which anonymous (heap, malloc) / file-backed (node binary, libraries); peak RSS over the whole run.",
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
  lines.push("", formatTable(["check", "measured", "target", "ratio", "verdict"], checkRows(results)));
  return lines.join("\n");
}
