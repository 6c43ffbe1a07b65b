import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { request } from "undici";
import { killOnExit, pollUntil } from "../../support/envtest-process.js";
import { freePort, REDIS_URL } from "../../support/redis.js";
import type { ControlPlane, Identity } from "../control-plane.js";

/**
 * The sync as operators run it: `node --import tsx sync/main.ts` with environment variables, its kubeconfig
 * from the control plane (KUBECONFIG: a real kube-apiserver's or the fake's), its health port, and its JSON log lines on stderr, kept with the
 * time each arrived so a test can order them against what it observed elsewhere.
 */
const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export interface LogLine {
  /** When the test process read the line (epoch ms). */
  readonly at: number;
  readonly level: string;
  readonly msg: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

export interface SyncCliOptions {
  readonly controlPlane: Pick<ControlPlane, "kubeconfigPath" | "serviceAccount">;
  readonly cluster: string;
  readonly prefix: string;
  /** POD_NAME: the replica's identity in the Lease and the heartbeat. */
  readonly podName: string;
  /** Whose token the sync uses; default the sync's ServiceAccount. */
  readonly identity?: Identity;
  /** Extra or overriding sync variables (sync/config.ts), e.g. WATCH_NAMESPACES, LEADER_LEASE_MS. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface SyncCli {
  readonly podName: string;
  readonly healthUrl: string;
  readonly logs: readonly LogLine[];
  readonly exited: boolean;
  /** Log lines whose message contains `text`. */
  logged(text: string): LogLine[];
  /** Resolves the first line (already read or to come) matching `match`. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  readyz(): Promise<{ status: number; body: string }>;
  /** A sample of the sync's /metrics by family name (the one cluster label), undefined when absent. */
  metric(name: string): Promise<number | undefined>;
  /** SIGTERM, then waits for the exit; resolves the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash, nothing released. */
  kill(): Promise<void>;
}

export async function startSyncCli(options: SyncCliOptions): Promise<SyncCli> {
  const { controlPlane } = options;
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    KUBECONFIG: controlPlane.kubeconfigPath(options.identity ?? "sync"),
    CLUSTER_NAME: options.cluster,
    REDIS_URL,
    EDGESLICE_PREFIX: options.prefix,
    SYNC_PORT: String(port),
    SYNC_HOST: "127.0.0.1",
    POD_NAME: options.podName,
    POD_NAMESPACE: controlPlane.serviceAccount.namespace,
    LOG_LEVEL: process.env.SYNC_LOG_LEVEL ?? "info",
    ...options.env,
  };
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "sync/main.ts"], {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  killOnExit(child);
  const exited = once(child, "exit").catch(() => []);
  const logs: LogLine[] = [];
  let partial = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    const at = Date.now();
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const text of lines) if (text.trim() !== "") logs.push(parseLine(text, at));
  });
  const healthUrl = `http://127.0.0.1:${port}`;
  const isExited = () => child.exitCode !== null || child.signalCode !== null;
  const get = async (path: string) => {
    const response = await request(`${healthUrl}${path}`);
    return { status: response.statusCode, body: await response.body.text() };
  };

  return {
    podName: options.podName,
    healthUrl,
    logs,
    get exited() {
      return isExited();
    },
    logged: (text) => logs.filter((line) => line.msg.includes(text)),
    async waitForLog(match, timeoutMs = 30_000) {
      let found: LogLine | undefined;
      await pollUntil(
        async () => {
          found = logs.find(match);
          return found !== undefined;
        },
        {
          timeoutMs,
          intervalMs: 20,
          describe: () => `${options.podName}: no matching log line in ${timeoutMs} ms:\n${tail(logs)}`,
        },
      );
      return found as LogLine;
    },
    readyz: () => get("/readyz"),
    async metric(name) {
      const { body } = await get("/metrics");
      const line = body
        .split("\n")
        .find((text) => text.startsWith(`${name}{`) || text.startsWith(`${name} `));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
    },
    async stop() {
      if (!isExited()) child.kill("SIGTERM");
      await exited;
      return child.exitCode;
    },
    async kill() {
      if (!isExited()) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Waits until the sync answers /readyz with 200 (synced and Redis ready). */
export async function untilReady(sync: SyncCli, timeoutMs = 30_000): Promise<void> {
  await pollUntil(async () => (await sync.readyz()).status === 200, {
    timeoutMs,
    giveUpIf: () => sync.exited,
    describe: () => `${sync.podName} not ready within ${timeoutMs} ms:\n${tail(sync.logs)}`,
  });
}

/** Waits until the sync reports `edgeslice_sync_leader` = `value`. */
export async function untilLeader(sync: SyncCli, value: 0 | 1, timeoutMs = 30_000): Promise<void> {
  await pollUntil(async () => (await sync.metric("edgeslice_sync_leader")) === value, {
    timeoutMs,
    giveUpIf: () => sync.exited,
    describe: () => `${sync.podName} leader gauge never ${value} within ${timeoutMs} ms:\n${tail(sync.logs)}`,
  });
}

/**
 * The log lines of several syncs read between `from` and `to` (epoch ms), debug left out, in the order they
 * arrived, each with its replica and its time relative to `origin`: what a failed handover assertion shows.
 */
export function interleavedLogs(
  syncs: readonly SyncCli[],
  window: { readonly from: number; readonly to: number; readonly origin: number },
): string {
  return syncs
    .flatMap((sync) => sync.logs.map((line) => ({ sync: sync.podName, line })))
    .filter(({ line }) => line.level !== "debug" && line.at >= window.from && line.at <= window.to)
    .sort((left, right) => left.line.at - right.line.at)
    .map(({ sync, line }) => `${line.at - window.origin} ms ${sync} ${line.level} ${line.msg}`)
    .join("\n");
}

function parseLine(text: string, at: number): LogLine {
  try {
    const { level, msg, ...fields } = JSON.parse(text) as Record<string, unknown>;
    return { at, level: String(level), msg: String(msg), fields };
  } catch {
    return { at, level: "raw", msg: text, fields: {} };
  }
}

function tail(logs: readonly LogLine[]): string {
  return logs
    .slice(-15)
    .map((line) => `${line.level} ${line.msg} ${JSON.stringify(line.fields)}`)
    .join("\n");
}
