import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, readFileSync, rmSync } from "node:fs";

/**
 * Child processes of the envtest harness (etcd, kube-apiserver, kubectl): output goes to a log file whose tail
 * explains a failed start, and every long-lived child is SIGKILLed when the test process exits, even after a
 * failed test or a worker torn down mid-test, so no etcd or apiserver outlives its test file.
 */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** SIGKILLs `child` if it is still running when this (test) process exits. */
export function killOnExit(child: ChildProcess): void {
  running.add(child);
  child.once("exit", () => running.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const orphan of running) orphan.kill("SIGKILL");
  });
}

/** Removes `dir` when this (test) process exits, in case the test never reached its cleanup. */
export function removeOnExit(dir: string): void {
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
}

export interface Daemon {
  readonly pid: number | undefined;
  readonly logFile: string;
  /** True once the process has exited (by itself or stopped). */
  readonly exited: boolean;
  /** Resolves when the process has exited. */
  readonly whenExited: Promise<void>;
  /** Sends `signal`; SIGKILL after `graceMs` if still alive. Resolves once it exited. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
  /** The last lines of its log, for error messages. */
  logTail(lines?: number): string;
}

export function startDaemon(command: string, args: readonly string[], logFile: string): Daemon {
  const log = createWriteStream(logFile, { flags: "a" });
  const child = spawn(command, [...args], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  killOnExit(child);
  let exited = false;
  const whenExited = once(child, "exit").then(
    () => {
      exited = true;
    },
    () => {
      exited = true;
    },
  );
  child.once("error", () => {});
  return {
    pid: child.pid,
    logFile,
    get exited() {
      return exited || child.exitCode !== null || child.signalCode !== null;
    },
    whenExited,
    async stop(signal = "SIGTERM", graceMs = 10_000) {
      if (!exited && child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
        await whenExited;
        clearTimeout(timer);
      }
      await new Promise<void>((resolve) => log.end(resolve));
    },
    logTail(lines = 20) {
      try {
        return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
      } catch {
        return "(no log)";
      }
    },
  };
}

export class CommandFailed extends Error {
  constructor(
    command: string,
    readonly exitCode: number | null,
    signal: NodeJS.Signals | null,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(`${command} failed (${signal ?? exitCode}): ${stderr.trim() || stdout.trim()}`);
  }
}

/** Runs a short command to completion; rejects with its stderr when it exits non-zero. */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      stdio: ["pipe", "pipe", "pipe"],
      env: options.env ?? process.env,
    });
    killOnExit(child);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new CommandFailed(`${command} ${args.join(" ")}`, code, signal, stdout, stderr));
    });
    child.stdin.end(options.input ?? "");
  });
}

/** Polls `check` every `intervalMs` until it is true; throws with `describe()` after `timeoutMs` or once `giveUpIf()`. */
export async function pollUntil(
  check: () => Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; describe: () => string; giveUpIf?: () => boolean },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline || options.giveUpIf?.()) throw new Error(options.describe());
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}
