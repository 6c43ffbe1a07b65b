import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CliRun, errorLines, ROOT } from "../sync/run-sync-cli.js";

/** `npm start` (as node with tsx as a loader) with `env` added, to its end. */
function runStart(env: Record<string, string>): Promise<CliRun> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  // The memory store: a REDIS_URL in the test environment would switch it to Redis.
  delete childEnv.REDIS_URL;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "scripts/start.ts"],
      { cwd: ROOT, env: childEnv, timeout: 30_000, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("npm start (scripts/start.ts) when it cannot start", () => {
  it("names PORT when its port is taken, in one error line, and exits 78", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    // No manifests: no demo backend to start on the examples' fixed ports.
    const examples = await mkdtemp(join(tmpdir(), "edgeslice-no-examples-"));
    try {
      const run = await runStart({ PORT: String(port), EXAMPLES_DIR: examples });

      expect(run.code).toBe(78);
      expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
        `PORT=${port}: 127.0.0.1:${port} is already in use (EADDRINUSE): stop the process that holds it, or choose another PORT`,
      ]);
    } finally {
      taken.close();
      await rm(examples, { recursive: true, force: true });
    }
  });

  it("refuses a bad variable in one error line, exit 78", async () => {
    const examples = await mkdtemp(join(tmpdir(), "edgeslice-no-examples-"));
    try {
      const run = await runStart({ IP_FAMILY: "IPv5", EXAMPLES_DIR: examples });

      expect(run.code).toBe(78);
      expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
        "invalid router configuration: IP_FAMILY: IP_FAMILY must be one of PreferIPv4, PreferIPv6, IPv4, IPv6",
      ]);
    } finally {
      await rm(examples, { recursive: true, force: true });
    }
  });
});
