import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";
import { type CliRun, errorLines, ROOT } from "../sync/run-sync-cli.js";

/** `npm run bench -- ARGS`, bounded: a run that started benchmarking fails the test instead of taking minutes. */
function runBench(args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "bench/run.ts", ...args],
      { cwd: ROOT, timeout: 20_000, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("npm run bench's command line", () => {
  it("prints its flags for --help and exits 0 without running anything", async () => {
    const run = await runBench(["--help"]);

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: npm run bench -- \[flags\]/);
    expect(run.stdout).toContain("--only PART");
    expect(run.stderr).toBe("");
  });

  it("refuses an unknown flag with one error line and exit 2", async () => {
    const run = await runBench(["--smoke", "--bogus"]);

    expect(run.code).toBe(2);
    expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
      "Unknown option '--bogus': run `npm run bench -- --help` for the options it takes",
    ]);
    expect(run.stdout).toBe("");
  });

  it("refuses a part it does not have and a duration that is no number, in one line, exit 2", async () => {
    const run = await runBench(["--only", "prxy", "--duration", "five"]);

    expect(run.code).toBe(2);
    expect(errorLines(run.stderr).map((line) => line.msg)).toEqual([
      "--only prxy: name one of proxy, profile, convergence, workers, metrics, steering, scale, h2; --duration five: give a number of at least 1 (`npm run bench -- --help` lists the flags)",
    ]);
  });
});
