import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FEATURES_V1_6_1, GATEWAY_TESTS_V1_6_1 } from "./support/official-v1.6.1.js";

/**
 * README's Gateway API feature table (or the docs page it moved to) names exactly the features of the official
 * suite v1.6.1, and every official test the features it marks supported on Node would run has its own test
 * here, named after it: declaring that set to the suite runs exactly those tests.
 */
const ROOT = join(import.meta.dirname, "..", "..");
const HEADING = /^#+ Gateway API features$/m;

function documents(): string[] {
  const docs = join(ROOT, "docs");
  const pages = readdirSync(docs, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(docs, name));
  return [join(ROOT, "README.md"), ...pages].map((path) => readFileSync(path, "utf8"));
}

interface Row {
  readonly features: readonly string[];
  readonly node: string;
}

function featureTable(): Row[] {
  const texts = documents().filter((text) => HEADING.test(text));
  expect(texts, "one document holds the feature table").toHaveLength(1);
  const text = texts[0] as string;
  const after = text.slice(text.search(HEADING)).split("\n");
  const start = after.findIndex((line) => line.startsWith("| feature |"));
  const rows: Row[] = [];
  for (const line of after.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const [, first = "", node = ""] = line.split("|");
    rows.push({
      features: [...first.matchAll(/`([A-Za-z0-9]+)`/g)].map((m) => m[1] as string),
      node: node.trim(),
    });
  }
  return rows;
}

const conformanceSources = readdirSync(import.meta.dirname)
  .filter((name) => name.endsWith(".test.ts") && name !== "feature-table.test.ts")
  .map((name) => readFileSync(join(import.meta.dirname, name), "utf8"));

describe("the Gateway API feature table", () => {
  it("names each feature of v1.6.1 once, and nothing else", () => {
    const named = featureTable().flatMap((row) => row.features);
    expect([...named].sort()).toEqual([...FEATURES_V1_6_1].sort());
  });

  it("has a test here for every official test that the features supported on Node would run", () => {
    const supported = new Set(featureTable().flatMap((row) => (row.node === "yes" ? row.features : [])));
    const runs = Object.entries(GATEWAY_TESTS_V1_6_1)
      .filter(([, gates]) => gates.every((feature) => supported.has(feature)))
      .map(([name]) => name);
    expect(runs.length).toBeGreaterThan(50);
    const missing = runs.filter(
      (name) => !conformanceSources.some((source) => new RegExp(`\\b${name}\\b`).test(source)),
    );
    expect(missing).toEqual([]);
  });
});
