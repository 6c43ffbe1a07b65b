import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort } from "../support/redis.js";
import { type CliRun, errorLines, ROOT } from "../sync/run-sync-cli.js";

/** `npm start` (as node with tsx as a loader) with `env` added, to its end. */
function runStart(env: Record<string, string>): Promise<CliRun> {
  // The memory store unless `env` names a Redis: the test environment's REDIS_URL would switch it to Redis.
  const { REDIS_URL: _testRedis, ...inherited } = process.env;
  const childEnv: NodeJS.ProcessEnv = { ...inherited, ...env };
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
        "invalid router configuration: IP_FAMILY must be one of PreferIPv4, PreferIPv6, IPv4, IPv6",
      ]);
    } finally {
      await rm(examples, { recursive: true, force: true });
    }
  });

  it("with Redis unreachable, says so once and counts every Service of the folder as unpublished, exit 1", async () => {
    const examples = await mkdtemp(join(tmpdir(), "edgeslice-unpublished-"));
    const service = (name: string) =>
      `apiVersion: v1\nkind: Service\nmetadata: { name: ${name}, namespace: demo, annotations: { edgeslice.io/hosts: ${name}.localhost } }\nspec: { ports: [{ name: http, port: 80 }] }\n`;
    try {
      // Services without EndpointSlices: no demo backend is started on the examples' fixed ports.
      await writeFile(join(examples, "services.yaml"), ["a", "b", "c"].map(service).join("---\n"));
      const port = await freePort();
      const run = await runStart({
        EXAMPLES_DIR: examples,
        PORT: "0",
        REDIS_URL: `redis://127.0.0.1:${port}`,
      });

      expect(run.code).toBe(1);
      expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
        `REDIS_URL: Redis at 127.0.0.1:${port} refused the connection (ECONNREFUSED): is Redis running at 127.0.0.1:${port}?`,
        `npm start failed: could not publish 3 of the 3 Services and the routes of ${examples}; the lines before say why`,
      ]);
      expect(run.stderr).not.toMatch(/maxRetriesPerRequest|Stream isn't writeable/);
    } finally {
      await rm(examples, { recursive: true, force: true });
    }
  });
});
