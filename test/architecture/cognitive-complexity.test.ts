import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

/**
 * Biome holds production code to a cognitive complexity (biome.json: noExcessiveCognitiveComplexity, an error
 * on lib/, store/, functions/ and sync/, no file let off); `npm test` runs Biome, so a function over it fails
 * the suite. This test checks that setting and that the rule fires where nothing overrides it.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const RULE = "noExcessiveCognitiveComplexity";

interface RuleSetting {
  readonly level: string;
  readonly options?: { readonly maxAllowedComplexity?: number };
}
interface Override {
  readonly includes?: readonly string[];
  readonly linter?: { readonly rules?: { readonly complexity?: Record<string, RuleSetting | string> } };
}
interface BiomeConfig {
  readonly overrides?: readonly Override[];
  readonly [field: string]: unknown;
}

const config = JSON.parse(readFileSync(join(ROOT, "biome.json"), "utf8")) as BiomeConfig;
const settingOf = (override: Override) => override.linter?.rules?.complexity?.[RULE];
const enforced = config.overrides?.find((override) => typeof settingOf(override) === "object");

const scratch = mkdtempSync(join(tmpdir(), "edgeslice-complexity-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The files of `files` Biome finds over the limit under the enforced setting alone, whatever the folder. */
async function filesOverTheLimit(files: readonly string[]): Promise<Set<string>> {
  const { overrides: _, ...rest } = config;
  const strict = {
    ...rest,
    $schema: undefined,
    vcs: { enabled: false },
    linter: { enabled: true, rules: { complexity: { [RULE]: settingOf(enforced ?? {}) } } },
  };
  writeFileSync(join(scratch, "biome.json"), JSON.stringify(strict));
  const biome = join(ROOT, "node_modules/.bin/biome");
  const args = ["lint", `--config-path=${scratch}`, `--only=complexity/${RULE}`, "--reporter=json", ...files];
  const output = await promisify(execFile)(biome, args, { cwd: ROOT, maxBuffer: 1 << 24 }).then(
    (done) => done.stdout,
    (failed: { stdout?: string }) => failed.stdout ?? "",
  );
  const report = JSON.parse(output) as { diagnostics: { category: string; location: { path: string } }[] };
  return new Set(
    report.diagnostics
      .filter((diagnostic) => diagnostic.category === `lint/complexity/${RULE}`)
      .map((diagnostic) => diagnostic.location.path),
  );
}

describe("the cognitive complexity of production code", () => {
  it("is an error at 25 on every production folder", () => {
    expect(enforced?.includes).toEqual(["lib/**", "store/**", "functions/**", "sync/**"]);
    expect(settingOf(enforced ?? {})).toEqual({ level: "error", options: { maxAllowedComplexity: 25 } });
  });

  it("lets no production file off the limit", () => {
    expect(config.overrides?.filter((override) => settingOf(override) === "off")).toEqual([]);
  });

  it("finds a function over the limit", async () => {
    const overComplex = "test/architecture/fixtures/over-complex.ts";
    expect(await filesOverTheLimit([overComplex, "lib/ip.ts"])).toEqual(new Set([overComplex]));
  });
});
