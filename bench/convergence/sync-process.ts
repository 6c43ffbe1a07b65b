import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PROBE = fileURLToPath(new URL("./memory-probe.mjs", import.meta.url));

/**
 * How the bench runs the sync: `built` is production (`npm run build`, then `node dist/sync.js`), `tsx` the
 * development path (`node --import tsx sync/main.ts`), kept to compare the two. Choose with
 * BENCH_SYNC_RUNNER=tsx; the default is built.
 */
export type SyncRunner = "built" | "tsx";

export function syncRunnerFromEnv(env: NodeJS.ProcessEnv = process.env): SyncRunner {
  const runner = env.BENCH_SYNC_RUNNER ?? "built";
  if (runner !== "built" && runner !== "tsx") throw new Error("BENCH_SYNC_RUNNER must be built or tsx");
  return runner;
}

/** `npm run build` once at bench start, so the bench measures the sync the image ships. */
export async function buildSync(): Promise<void> {
  await promisify(execFile)("npm", ["run", "--silent", "build"], { cwd: ROOT });
}

export interface MemorySample {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly heapTotalBytes: number;
  readonly externalBytes: number;
  readonly maxRssBytes: number;
  /** Linux: resident anonymous memory (JS heap, malloc) and resident file mappings (node, libraries). */
  readonly rssAnonBytes: number;
  readonly rssFileBytes: number;
}

export interface SyncProcess {
  readonly pid: number | undefined;
  /** `http://127.0.0.1:<SYNC_PORT>`: /healthz, /readyz, /metrics of the sync itself. */
  readonly healthUrl: string;
  /** Milliseconds since the process was spawned. */
  sinceSpawnMs(): number;
  /** Milliseconds from spawn until `path` on the health server first answers 200. */
  until(path: "/healthz" | "/readyz", timeoutMs: number): Promise<number>;
  memory(): Promise<MemorySample>;
  /** Writes a heap snapshot into `dir` after a full GC (v8.writeHeapSnapshot); resolves its path. */
  heapSnapshot(dir: string): Promise<string>;
  /** SIGTERM, as Kubernetes stops it; SIGKILL after 10 s. */
  stop(): Promise<void>;
}

export interface SyncProcessOptions {
  readonly runner: SyncRunner;
  /** The sync's environment: CLUSTER_NAME, REDIS_URL, SYNC_PORT ... and KUBECONFIG. */
  readonly env: Readonly<Record<string, string>>;
  readonly syncPort: number;
}

/** Writes a kubeconfig file for `kubeConfigJson` (KubeConfig.exportConfig()) and returns its path. */
export async function writeKubeconfig(dir: string, kubeConfigJson: string): Promise<string> {
  const path = join(dir, "kubeconfig.json");
  await writeFile(path, kubeConfigJson);
  return path;
}

/** The sync's own CLI entry in a process of its own, live mode (informers, reconciler, Redis, heartbeat). */
export function startSyncProcess(options: SyncProcessOptions): SyncProcess {
  const entry =
    options.runner === "built"
      ? ["--import", PROBE, "dist/sync.js"]
      : ["--import", "tsx", "--import", PROBE, "sync/main.ts"];
  const spawnedAt = performance.now();
  const child: ChildProcess = spawn(process.execPath, entry, {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, ...options.env },
  });
  const exited = once(child, "exit");
  const healthUrl = `http://127.0.0.1:${options.syncPort}`;
  const ask = async <T>(message: { type: string }, field: string): Promise<T> => {
    const answer = new Promise<T>((resolve, reject) => {
      const onMessage = (raw: unknown) => {
        const reply = raw as Record<string, unknown>;
        if (reply.type !== message.type) return;
        child.off("message", onMessage);
        resolve(reply[field] as T);
      };
      child.on("message", onMessage);
      void exited.then(() => reject(new Error(`the sync exited before answering ${message.type}`)));
    });
    child.send(message);
    return answer;
  };
  return {
    pid: child.pid,
    healthUrl,
    sinceSpawnMs: () => performance.now() - spawnedAt,
    async until(path, timeoutMs) {
      const deadline = spawnedAt + timeoutMs;
      while (performance.now() < deadline) {
        if (child.exitCode !== null) throw new Error(`the sync exited (${child.exitCode}) before ${path}`);
        const status = await fetch(`${healthUrl}${path}`).then(
          (response) => response.status,
          () => 0,
        );
        if (status === 200) return performance.now() - spawnedAt;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`the sync's ${path} did not answer 200 within ${timeoutMs} ms`);
    },
    memory: () => ask<MemorySample>({ type: "memory" }, "memory"),
    heapSnapshot: (dir) => ask<string>({ type: "heap-snapshot", dir } as { type: string }, "file"),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
