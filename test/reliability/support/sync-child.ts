import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("./sync-process.ts", import.meta.url));

export interface SyncChild {
  /** SIGKILL: the sync dies without cleaning anything up. */
  kill(): Promise<void>;
}

/** Starts the sync process and resolves once it publishes (or rejects within `timeoutMs`). */
export async function startSyncChild(env: Record<string, string>, timeoutMs = 20_000): Promise<SyncChild> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", SCRIPT], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    env: { ...process.env, ...env },
  });
  const exited = once(child, "exit").catch(() => []);
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await exited;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`sync did not publish within ${timeoutMs} ms`)),
        timeoutMs,
      );
      child.once("message", (message) => {
        clearTimeout(timer);
        if ((message as { type?: unknown }).type === "publishing") resolve();
        else reject(new Error("sync started but does not publish"));
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error("sync process exited before publishing"));
      });
    });
  } catch (error) {
    await kill();
    throw error;
  }
  return { kill };
}
