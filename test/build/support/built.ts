import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
export const ROOT = new URL("../../../", import.meta.url).pathname;

/** The runtime stage's install, word for word the Dockerfile's `RUN npm ci ...` (test/build/dockerfile.test.ts). */
export const PRODUCTION_INSTALL = [
  "ci",
  "--omit=dev",
  "--omit=optional",
  "--ignore-scripts",
  "--no-audit",
  "--no-fund",
];

/** `npm run build -- --outdir DIR`: the production build, into a folder of the test's own. */
export async function buildInto(outdir: string): Promise<string> {
  const { stdout } = await run("npm", ["run", "--silent", "build", "--", "--outdir", outdir], { cwd: ROOT });
  return stdout;
}

/** A folder readable by every user (mkdtemp makes 0700), removed by `remove()`. */
export async function tempFolder(label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `edgeslice-${label}-`));
  await chmod(dir, 0o755);
  return dir;
}

/**
 * What the image's runtime stage holds: package.json, package-lock.json, dist/ from `npm run build`, and
 * `npm ci --omit=dev --omit=optional --ignore-scripts`, as the Dockerfile runs it (from the local npm cache:
 * --offline never reaches a registry).
 */
export async function productionInstall(): Promise<string> {
  const dir = await tempFolder("production");
  for (const file of ["package.json", "package-lock.json"]) await copyFile(join(ROOT, file), join(dir, file));
  await buildInto(join(dir, "dist"));
  await run("npm", [...PRODUCTION_INSTALL, "--offline"], { cwd: dir });
  return dir;
}

export async function remove(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** The Deployment's securityContext: uid/gid 65532 (not root), read-only root filesystem. */
export const POD_USER = 65532;

/**
 * As root with unshare and setpriv (Linux): a private mount namespace whose `/` is remounted read-only, and
 * the process dropped to POD_USER, the way the pod runs the image. Elsewhere the command runs as is.
 */
export const canRunAsPod =
  process.getuid?.() === 0 && existsSync("/usr/bin/unshare") && existsSync("/usr/bin/setpriv");

function asPod(args: readonly string[]): [string, string[]] {
  if (!canRunAsPod) return [process.execPath, [...args]];
  const user = String(POD_USER);
  const drop = `exec setpriv --reuid ${user} --regid ${user} --clear-groups "$@"`;
  return [
    "unshare",
    ["-m", "--propagation", "private", "sh", "-c", `mount -o remount,bind,ro / && ${drop}`, "sh"].concat(
      process.execPath,
      args,
    ),
  ];
}

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node ARGS` in `cwd` (as the pod when possible) with only `env` (no tsx, no NODE_OPTIONS), to its end. */
export function runNode(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<Finished> {
  const child = startNode(cwd, args, env);
  return child.finished;
}

export interface Running {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly finished: Promise<Finished>;
  /** Resolves once `pattern` appears in stdout+stderr; rejects if the process ends first or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<void>;
}

export function startNode(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Running {
  const [command, commandArgs] = asPod(args);
  const child = spawn(command, commandArgs, {
    cwd,
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const finished = new Promise<Finished>((resolve) => {
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
  const output = () => stdout + stderr;
  const waitFor = async (pattern: RegExp, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    let ended = false;
    void finished.then(() => {
      ended = true;
    });
    while (!pattern.test(output())) {
      if (ended) throw new Error(`process ended before ${pattern}:\n${output()}`);
      if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, output, finished, waitFor };
}
