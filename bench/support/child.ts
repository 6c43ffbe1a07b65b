import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";

/**
 * Bench participants (backend, proxy, load generator) each run in their own Node process so they do not share
 * one event loop: on a 2-core machine a shared loop would measure the loop, not the proxy. `cpu` pins a child
 * with taskset when available, so the proxy under test gets a core of its own.
 */
export interface ChildOptions {
  readonly cpu?: number | undefined;
  /** Extra node flags, e.g. `--cpu-prof`. */
  readonly nodeFlags?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** `tsx` (default) runs a .ts script through tsx; `node` runs built JavaScript with plain node. */
  readonly runner?: "tsx" | "node";
  /** Where the child's stdout goes; `ignore` (/dev/null) for a child that writes lines nobody reads. */
  readonly stdout?: "inherit" | "ignore";
}

export interface Child {
  readonly pid: number | undefined;
  send(message: unknown): void;
  /** The next IPC message of the given type(s) (rejects if the child exits first or after `timeoutMs`). */
  next<T>(type: string | readonly string[], timeoutMs: number): Promise<T>;
  /** Asks the child to exit cleanly (so `--cpu-prof` is written); kills it if it does not within 10 s. */
  stop(): Promise<void>;
}

export function taskSetAvailable(): boolean {
  return existsSync("/usr/bin/taskset") || existsSync("/bin/taskset");
}

export function startChild(script: string, options: ChildOptions = {}): Child {
  const loader = options.runner === "node" ? [] : ["--import", "tsx"];
  const nodeArgs = [...loader, ...(options.nodeFlags ?? []), script];
  const pinned = options.cpu !== undefined && taskSetAvailable();
  const command = pinned ? "taskset" : process.execPath;
  const args = pinned ? ["-c", String(options.cpu), process.execPath, ...nodeArgs] : nodeArgs;
  const child: ChildProcess = spawn(command, args, {
    stdio: ["ignore", options.stdout ?? "inherit", "inherit", "ipc"],
    env: { ...process.env, ...options.env },
  });
  const inbox: { type: string; body: unknown }[] = [];
  const waiters: { types: readonly string[]; resolve: (body: unknown) => void }[] = [];
  child.on("message", (raw) => {
    const message = raw as { type?: unknown };
    const type = typeof message.type === "string" ? message.type : "";
    const waiter = waiters.find((w) => w.types.includes(type));
    if (waiter) waiter.resolve(raw);
    else inbox.push({ type, body: raw });
  });
  const exited = once(child, "exit");
  return {
    pid: child.pid,
    send(message) {
      child.send(message as object);
    },
    next<T>(type: string | readonly string[], timeoutMs: number): Promise<T> {
      const types: readonly string[] = typeof type === "string" ? [type] : type;
      const queued = inbox.findIndex((m) => types.includes(m.type));
      const hit = queued >= 0 ? inbox.splice(queued, 1)[0] : undefined;
      if (hit) return Promise.resolve(hit.body as T);
      return new Promise<T>((resolve, reject) => {
        const settle = (outcome: () => void) => {
          const index = waiters.indexOf(waiter);
          if (index < 0) return;
          waiters.splice(index, 1);
          clearTimeout(timer);
          outcome();
        };
        const waiter = { types, resolve: (body: unknown) => settle(() => resolve(body as T)) };
        const timer = setTimeout(
          () => settle(() => reject(new Error(`${script}: no ${types.join("/")} within ${timeoutMs} ms`))),
          timeoutMs,
        );
        waiters.push(waiter);
        void exited.then(() =>
          settle(() => reject(new Error(`${script} exited before sending ${types.join("/")}`))),
        );
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ type: "stop" });
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** Child side: run `onStop` then exit when the parent says stop or goes away. */
export function exitOnStop(onStop: () => Promise<void>): void {
  const finish = () => {
    void onStop()
      .catch((error: unknown) => console.error(error))
      .finally(() => process.exit(0));
  };
  process.on("message", (raw) => {
    if ((raw as { type?: unknown }).type === "stop") finish();
  });
  process.on("disconnect", finish);
}

export function tell(message: { type: string } & Record<string, unknown>): void {
  process.send?.(message);
}

/** Child side: answer `{type: "cpu"}` with this process's CPU time so far (µs), for CPU-per-request figures. */
export function answerCpuUsage(): void {
  process.on("message", (raw) => {
    if ((raw as { type?: unknown }).type !== "cpu") return;
    const usage = process.cpuUsage();
    tell({ type: "cpu", micros: usage.user + usage.system });
  });
}

/** V8's collections in a bench process so far: counts by kind and the pauses' total (bench/proxy/gc-counts.mjs). */
export interface GcCounts {
  readonly scavenges: number;
  readonly markCompacts: number;
  readonly pauseMs: number;
}

/** Asks a process that loaded bench/proxy/gc-counts.mjs for its collections so far. */
export async function gcCounts(child: Child): Promise<GcCounts> {
  child.send({ type: "gc" });
  return child.next<GcCounts>("gc", 10_000);
}

/** Parent side: CPU µs the child has used so far. */
export async function cpuMicros(child: Child): Promise<number> {
  child.send({ type: "cpu" });
  const reply = await child.next<{ micros: number }>("cpu", 10_000);
  return reply.micros;
}
