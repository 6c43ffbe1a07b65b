import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { Miniflare } from "miniflare";

const run = promisify(execFile);

/** The wrangler.toml settings the bundle runs with (kept in step with that file). */
export const COMPATIBILITY_DATE = "2026-04-26";
export const COMPATIBILITY_FLAGS = ["nodejs_compat"];

export interface WorkerBundle {
  /** The bundled module that `wrangler deploy` would upload. */
  readonly scriptPath: string;
  remove(): Promise<void>;
}

/**
 * Bundles functions/workers/main.ts exactly as a deploy would (`wrangler deploy --dry-run`), into a directory of
 * its own so parallel runs and `npm run build:worker` never overwrite each other. Takes a few seconds: once
 * per test file.
 */
export async function buildWorkerBundle(): Promise<WorkerBundle> {
  const outdir = await mkdtemp(join(tmpdir(), "edgeslice-worker-"));
  await run("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir], {
    cwd: process.cwd(),
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", CI: "1" },
    timeout: 60_000,
  });
  return {
    scriptPath: join(outdir, "main.js"),
    remove: () => rm(outdir, { recursive: true, force: true }),
  };
}

/** The bundle inside real workerd, with the given vars/secrets; dispose() when done. */
export function runBundle(bundle: WorkerBundle, bindings: Record<string, string>): Miniflare {
  return new Miniflare({
    modules: true,
    scriptPath: bundle.scriptPath,
    // Module names are paths relative to this root; the bundle lives outside the project directory.
    modulesRoot: dirname(bundle.scriptPath),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: COMPATIBILITY_FLAGS,
    bindings,
  });
}
