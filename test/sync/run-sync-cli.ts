import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the sync CLI as `npm run sync` does (node with tsx as a loader, without npx's own start-up on every
 * call), bounded so a hang fails the test instead of the run. `undefined` removes a variable.
 */
export function runSync(args: readonly string[], env: Record<string, string | undefined>): Promise<CliRun> {
  return new Promise((resolve) => {
    const childEnv = { ...process.env, ...env };
    for (const [key, value] of Object.entries(env)) if (value === undefined) delete childEnv[key];
    execFile(
      process.execPath,
      ["--import", "tsx", "sync/main.ts", ...args],
      { cwd: ROOT, env: childEnv, timeout: 30_000, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** The JSON lines a run wrote to stderr. */
export function logLines(stderr: string): LogLine[] {
  return stderr
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as LogLine);
}

/** The error-level lines of a run. */
export function errorLines(stderr: string): LogLine[] {
  return logLines(stderr).filter((line) => line.level === "error");
}
