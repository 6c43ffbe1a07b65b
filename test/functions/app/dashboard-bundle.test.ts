import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * The dashboard's browser script is typed TypeScript (functions/app/dashboard-ui/, the DOM's types and none of
 * Node's), bundled by esbuild into functions/app/dashboard-script.ts, which is checked in so that tsx, the tests
 * and wrangler carry it without a build step; `npm run build` bundles it again first.
 */
const ROOT = resolve(import.meta.dirname, "../../..");
const run = promisify(execFile);

describe("the dashboard's bundled script", () => {
  it("is what its sources bundle to now (npm run dashboard writes it)", async () => {
    const checked = await run(process.execPath, ["scripts/dashboard-bundle.mjs", "--check"], {
      cwd: ROOT,
    }).then(
      () => "up to date",
      (failed: { stderr?: string }) => failed.stderr ?? "failed",
    );
    expect(checked).toBe("up to date");
  });

  it("comes from sources that type-check against the DOM", async () => {
    const tsc = resolve(ROOT, "node_modules/.bin/tsc");
    const checked = await run(tsc, ["--noEmit", "-p", "functions/app/dashboard-ui"], { cwd: ROOT }).then(
      () => "",
      (failed: { stdout?: string }) => failed.stdout ?? "failed",
    );
    expect(checked).toBe("");
  });
});
